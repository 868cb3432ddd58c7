/*
 * Fuzz target: the decompressed trace stream (the stream header, then
 * records), put into zstd frames with correct sizes and checksums
 * (fuzz_wrap_stream: "@@FRAME@" in the input begins a new frame,
 * "@@SEGMT@" a new segment), then read as trace_file.c reads a file.  The
 * checksums no longer stop the fuzzer at the first frame: it mutates the
 * records -- HEADER, MODULE, BLOCKS, EVENTS, SEGMENT, END and the pt
 * backend's -- and the decoder's use of them.  Seeds: `zstd -dc` of the
 * traces.
 */
#include "fuzz_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_file f;
	size_t len;
	uint8_t *file = fuzz_wrap_stream(data, size, &len);

	fuzz_file_open(&f, file, len);
	free(file);
	fuzz_read_trace(f.path);
	fuzz_file_close(&f);
	return 0;
}
