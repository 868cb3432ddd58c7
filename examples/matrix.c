/*
 * The bundled example: a matrix summed twice, by rows and by columns.
 *
 * The column walk jumps a whole row (4 KiB) between consecutive reads, so
 * every read touches a new cache line, and a column's 1024 lines (64 KiB)
 * do not fit in a 32 KiB L1 data cache: almost every read misses.  With a
 * 128 KiB L1 the lines of one column are still there for the next 15
 * columns, and the misses almost vanish -- the kind of "what if" cgtrace
 * answers from one recording.  (Rows are padded by one cache line, so that
 * a column spreads over all the sets rather than a few.)
 */
#include <stdio.h>

#define N 1024
#define ROW (N + 16)

static int matrix[N][ROW];

__attribute__((noinline)) static long sum_by_rows(void)
{
	long sum = 0;
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++)
			sum += matrix[i][j];
	return sum;
}

__attribute__((noinline)) static long sum_by_columns(void)
{
	long sum = 0;
	for (int j = 0; j < N; j++)
		for (int i = 0; i < N; i++)
			sum += matrix[i][j];	/* one row apart: the cache problem */
	return sum;
}

int main(void)
{
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++)
			matrix[i][j] = i ^ j;
	long rows = sum_by_rows();
	long columns = sum_by_columns();
	printf("sums: %ld %ld\n", rows, columns);
	return rows == columns ? 0 : 1;
}
