/* A switch-based bytecode interpreter: its dispatch is an indirect jump. */
#include <stdio.h>
#include <stdlib.h>

enum op { PUSH, ADD, SUB, MUL, DUP, SWAP, JNZ, DEC, POP, PRINT, HALT };

static int program[] = {
	PUSH, 0,	/*  0: accumulator */
	PUSH, 0,	/*  2: counter, patched with the iteration count */
	SWAP,		/*  4: loop: [counter, acc] */
	PUSH, 7, ADD,	/*  5: acc += 7 */
	DUP, PUSH, 3, MUL, POP,	/*  8: some work thrown away */
	SWAP,		/* 13: [acc, counter] */
	DEC, DUP,	/* 14 */
	JNZ, 4,		/* 16 */
	POP, PRINT,	/* 18 */
	HALT,		/* 20 */
};

static long run(const int *code)
{
	long stack[64];
	int sp = 0, pc = 0;

	for (;;) {
		switch (code[pc++]) {
		case PUSH: stack[sp++] = code[pc++]; break;
		case ADD: sp--; stack[sp - 1] += stack[sp]; break;
		case SUB: sp--; stack[sp - 1] -= stack[sp]; break;
		case MUL: sp--; stack[sp - 1] *= stack[sp]; break;
		case DUP: stack[sp] = stack[sp - 1]; sp++; break;
		case SWAP: { long t = stack[sp - 1]; stack[sp - 1] = stack[sp - 2]; stack[sp - 2] = t; break; }
		case JNZ: { int target = code[pc++]; if (stack[--sp] != 0) pc = target; break; }
		case DEC: stack[sp - 1]--; break;
		case POP: sp--; break;
		case PRINT: printf("%ld\n", stack[sp - 1]); break;
		case HALT: return sp;
		default: abort();
		}
	}
}

int main(int argc, char **argv)
{
	program[3] = argc > 1 ? atoi(argv[1]) : 30000;
	return run(program) == 0 ? 0 : 1;
}
