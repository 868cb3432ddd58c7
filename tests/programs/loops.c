/* Loops over arrays: sequential, strided and column-order 2-D walks. */
#include <stdio.h>
#include <stdlib.h>

#define N 256

static double grid[N][N];
static int vec[1 << 16];

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 2;
	long sum = 0;
	double dsum = 0;

	for (int r = 0; r < reps; r++) {
		for (int i = 0; i < (1 << 16); i++)
			vec[i] = i * r;
		for (int i = 0; i < (1 << 16); i += 16)	/* one element per cache line */
			sum += vec[i];
		for (int i = 0; i < N; i++)		/* row order */
			for (int j = 0; j < N; j++)
				grid[i][j] = i + j + r;
		for (int j = 0; j < N; j++)		/* column order */
			for (int i = 0; i < N; i++)
				dsum += grid[i][j];
	}
	printf("%ld %.0f\n", sum, dsum);
	return 0;
}
