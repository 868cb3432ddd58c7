/*
 * Linked into every program of make test-asan's build: the sanitizers'
 * reports go to files in one directory (SANITIZER_LOGS, fixed at build
 * time), which tests/run-tests.sh checks after every test. Compiled-in
 * defaults rather than ASAN_OPTIONS, because the tests run cgtrace in a
 * cleared environment (clean_env) as well.
 */
const char *__asan_default_options(void);
const char *__ubsan_default_options(void);

const char *__asan_default_options(void)
{
	return "log_path=" SANITIZER_LOGS "/asan:detect_leaks=1:detect_stack_use_after_return=1";
}

const char *__ubsan_default_options(void)
{
	return "log_path=" SANITIZER_LOGS "/ubsan:print_stacktrace=1:halt_on_error=1";
}
