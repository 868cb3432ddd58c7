/*
 * A minimal unit-test harness: PLAN(n) first prints TAP's plan line "1..n";
 * CHECK() records a failure with its place; RUN() runs one test function
 * and prints "ok N - name" or "not ok N - name", the lines
 * tests/run-tests.sh counts against the plan.  main returns CHECK_DONE(),
 * which fails when a check failed or the number of tests run is not the
 * plan.  Output is flushed after every line, so that a test that crashes
 * keeps what it printed before.
 */
#ifndef CGTRACE_CHECK_H
#define CGTRACE_CHECK_H

#include <stdio.h>

static int check_failed, check_number, check_any_failed, check_planned = -1;

#define PLAN(n)                                                                            \
	do {                                                                               \
		check_planned = (n);                                                       \
		printf("1..%d\n", check_planned);                                          \
		fflush(stdout);                                                            \
	} while (0)

#define CHECK(cond)                                                                        \
	do {                                                                               \
		if (!(cond)) {                                                             \
			printf("  %s:%d: failed: %s\n", __FILE__, __LINE__, #cond);        \
			check_failed = 1;                                                  \
		}                                                                          \
	} while (0)

#define CHECK_EQ(a, b)                                                                     \
	do {                                                                               \
		unsigned long long check_a = (unsigned long long)(a),                      \
				   check_b = (unsigned long long)(b);                      \
		if (check_a != check_b) {                                                  \
			printf("  %s:%d: failed: %s == %s (%llu != %llu)\n", __FILE__,     \
			       __LINE__, #a, #b, check_a, check_b);                        \
			check_failed = 1;                                                  \
		}                                                                          \
	} while (0)

#define RUN(test)                                                                          \
	do {                                                                               \
		check_failed = 0;                                                          \
		test();                                                                    \
		printf("%s %d - %s\n", check_failed ? "not ok" : "ok", ++check_number,     \
		       #test);                                                             \
		fflush(stdout);                                                            \
		check_any_failed |= check_failed;                                          \
	} while (0)

#define CHECK_DONE() (check_any_failed || check_number != check_planned ? 1 : 0)

#endif
