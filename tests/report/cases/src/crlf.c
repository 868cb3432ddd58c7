line one
line two
line three
line four without newline