"""Checks a trace's call and return facts against its stack pointers.

Reads `cgtrace dump` lines of one thread on stdin.  A callee's stack
pointer at entry is where its call instruction wrote the return address.
A call pushes a frame
(the address after the call instruction, the stack pointer at the callee's
entry); a return must land at the top frame's address with the stack
pointer 8 above the callee's entry (the return address popped), after
frames left by longjmp or unwinding (stack pointer above them) are dropped.
Prints: calls returns matched_returns calls_landing_elsewhere callee_sps_not_the_push
"""
import sys

stack = []
calls = returns = matched = elsewhere = bad_sp = 0
pending = None  # the previous block's exit: (kind, destination, address after it, push)
for line in sys.stdin:
    f = line.split()
    if f[0] == '#':  # a client request or a signal
        continue
    addr, length = int(f[1], 16), int(f[2])
    sp = int(f[f.index('SP') + 1], 16) if 'SP' in f else None
    if pending is not None:
        kind, dst, after, push = pending
        if sp is None:
            sys.exit(f"no SP at the entry of the block at {addr:#x}")
        if kind == 'call':
            elsewhere += dst is not None and dst != addr
            bad_sp += push != sp
            stack.append((after, sp))
        elif kind == 'return':
            while stack and stack[-1][1] + 8 < sp:
                stack.pop()
            if stack and stack[-1] == (addr, sp - 8):
                matched += 1
                stack.pop()
        pending = None
    if '->' in f:
        i = f.index('->')
        kind = f[i + 1]
        writes = [int(t.split(':')[0], 16) for k, t in zip(f, f[1:]) if k == 'W' and t.endswith(':8')]
        pending = (kind, int(f[i + 2], 16) if len(f) > i + 2 else None, addr + length,
                   writes[-1] if writes else None)
        calls += kind == 'call'
        returns += kind == 'return'
print(calls, returns, matched, elsewhere, bad_sp)
