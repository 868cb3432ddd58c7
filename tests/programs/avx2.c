/* AVX2: 256-bit loads and stores, FMA-free arithmetic, masked loads and
   gathers (guarded and multi-element memory accesses). */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>

#define N 4096

static float a[N], b[N], c[N];
static int idx[N];

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 20;
	__m256 acc = _mm256_setzero_ps();
	__m256i iacc = _mm256_setzero_si256();

	for (int i = 0; i < N; i++) {
		a[i] = (float)i;
		b[i] = (float)(N - i);
		idx[i] = (i * 37) % N;
	}
	for (int r = 0; r < reps; r++) {
		for (int i = 0; i < N; i += 8) {
			__m256 va = _mm256_loadu_ps(a + i);
			__m256 vb = _mm256_loadu_ps(b + i);
			_mm256_storeu_ps(c + i, _mm256_add_ps(_mm256_mul_ps(va, vb), va));
		}
		__m256i mask = _mm256_setr_epi32(-1, 0, -1, 0, -1, -1, 0, (r & 1) ? -1 : 0);
		for (int i = 0; i < N; i += 8) {
			acc = _mm256_add_ps(acc, _mm256_maskload_ps(c + i, mask));
			__m256i vi = _mm256_loadu_si256((const __m256i *)(idx + i));
			iacc = _mm256_add_epi32(iacc, _mm256_i32gather_epi32(idx, vi, 4));
		}
	}
	float out[8];
	int iout[8];
	_mm256_storeu_ps(out, acc);
	_mm256_storeu_si256((__m256i *)iout, iacc);
	printf("%.1f %d\n", out[0] + out[7], iout[0] + iout[7]);
	return 0;
}
