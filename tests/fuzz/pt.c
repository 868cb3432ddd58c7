/*
 * Fuzz target: an Intel PT trace through cgtrace's PT decoder (decode/pt/:
 * the PT_CONFIG, SIDEBAND, AUX and IMAGE records, perf records, libipt's
 * decoding against the modules' code, the address estimator, the
 * conversion into a trace of blocks).  The input is the decompressed
 * stream of a pt trace (`zstd -dc` of pt-synth's output: the stream
 * header, HEADER, PT_CONFIG, MODULE, IMAGE, SIDEBAND and AUX records);
 * the target puts it into zstd frames with checksums (fuzz.h), decodes it
 * as `cgtrace info` would on first use, and then reads the decode: a
 * decode that succeeds must be a trace that reads without error, or the
 * target aborts.
 *
 * The seeds' MODULE records name programs of this tree by absolute path,
 * with their build-ids: fuzzed where the seeds were made, the AUX packets
 * decode against real code; elsewhere the modules count as changed.
 */
#include "fuzz_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_file in, out;
	struct cgt_error e;
	size_t len;
	uint8_t *file = fuzz_wrap_stream(data, size, &len);

	fuzz_file_open(&in, file, len);
	free(file);
	fuzz_file_open(&out, "", 0);
	const char *tmp = getenv("TMPDIR");
	const struct cgt_decoder_options scratch = { .scratch_dir = tmp && *tmp ? tmp : "/tmp" };
	int rc = cgt_pt_decode(in.path, out.fd, out.path, &scratch, &e);
	fuzz_say("pt decode", rc, &e);
	if (rc == 0) {
		if (cgt_trace_info(fuzz_devnull(), fuzz_devnull(), out.path, NULL, NULL, &e) < 0) {
			fprintf(stderr, "pt fuzz: the decode does not read back: %s\n", e.msg);
			abort();
		}
	}
	fuzz_file_close(&out);
	fuzz_file_close(&in);
	return 0;
}
