/* Pointer chasing through a randomly linked list, then a sequential one. */
#include <stdio.h>
#include <stdlib.h>

struct node {
	struct node *next;
	long payload[7];	/* one node per 64-byte line */
};

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20000;
	struct node *nodes = calloc(n, sizeof(*nodes));
	int *order = malloc(n * sizeof(*order));
	unsigned seed = 12345;
	long sum = 0;

	for (int i = 0; i < n; i++)
		order[i] = i;
	for (int i = n - 1; i > 0; i--) {	/* Fisher-Yates with a fixed LCG */
		seed = seed * 1103515245u + 12345u;
		int j = (int)((seed >> 8) % (unsigned)(i + 1));
		int t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (int i = 0; i < n - 1; i++)
		nodes[order[i]].next = &nodes[order[i + 1]];
	for (int i = 0; i < n; i++)
		nodes[i].payload[0] = i;
	for (int round = 0; round < 4; round++)
		for (struct node *p = &nodes[order[0]]; p != NULL; p = p->next)
			sum += p->payload[0];
	for (int i = 0; i < n; i++)
		sum += nodes[i].payload[0];
	printf("%ld\n", sum);
	free(order);
	free(nodes);
	return 0;
}
