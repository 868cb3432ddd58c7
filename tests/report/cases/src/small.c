/* A small source file for the report tests. */
#include <stdio.h>

static int square(int x)
{
	return x * x;
}

static int cube(int x)
{
	return x * square(x);
}

int main(void)
{
	int sum = 0;
	for (int i = 0; i < 10; i++)
		sum += square(i) + cube(i);
	printf("%d\n", sum);
	return 0;
}
