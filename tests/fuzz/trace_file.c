/*
 * Fuzz target: a whole trace file, as `cgtrace info` and `cgtrace
 * simulate` read it -- the container reader (zstd frames, skippable frames
 * and segment markers, truncation), the records and the decoder.  Seeds:
 * traces made by `cgtrace record` and pt-synth.
 */
#include "fuzz_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_file f;

	fuzz_file_open(&f, data, size);
	fuzz_read_trace(f.path);
	fuzz_file_close(&f);
	return 0;
}
