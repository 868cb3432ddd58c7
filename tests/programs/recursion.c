/* Recursion: naive Fibonacci, Ackermann, and a recursive tree build/sum. */
#include <stdio.h>
#include <stdlib.h>

struct tree {
	struct tree *left, *right;
	int value;
};

static long fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static int ackermann(int m, int n)
{
	if (m == 0)
		return n + 1;
	if (n == 0)
		return ackermann(m - 1, 1);
	return ackermann(m - 1, ackermann(m, n - 1));
}

static struct tree *build(int depth, int *counter)
{
	if (depth == 0)
		return NULL;
	struct tree *t = malloc(sizeof(*t));
	t->value = (*counter)++;
	t->left = build(depth - 1, counter);
	t->right = build(depth - 1, counter);
	return t;
}

static long sum_tree(const struct tree *t)
{
	return t ? t->value + sum_tree(t->left) + sum_tree(t->right) : 0;
}

static void free_tree(struct tree *t)
{
	if (t) {
		free_tree(t->left);
		free_tree(t->right);
		free(t);
	}
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 22;
	int counter = 0;
	struct tree *t = build(12, &counter);

	printf("%ld %d %ld\n", fib(n), ackermann(2, 300), sum_tree(t));
	free_tree(t);
	return 0;
}
