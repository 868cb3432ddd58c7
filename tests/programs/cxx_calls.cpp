// C++ calls for Callgrind's replay: exceptions thrown through several
// frames and caught (the unwinder's frames, landing pads, .cold parts),
// and virtual calls through objects the compiler cannot see the type of;
// a literal operator, whose name has quotes (operator"" _cm).
#include <cstdio>
#include <stdexcept>

namespace {

struct Shape {
	virtual ~Shape() {}
	virtual long area() const = 0;
};

struct Square : Shape {
	long side;
	explicit Square(long s) : side(s) {}
	long area() const override { return side * side; }
};

struct Rect : Shape {
	long w, h;
	Rect(long a, long b) : w(a), h(b) {}
	long area() const override { return w * h; }
};

__attribute__((noinline)) Shape *make(int i)
{
	if (i % 3 == 1)
		return new Rect(i, i + 1);
	return new Square(i);
}

volatile long sink;

__attribute__((noinline)) long thrower(int n)
{
	if (n == 0)
		throw std::runtime_error("bottom");
	long r = thrower(n - 1);
	sink += r;
	return r + 1;
}

// Catches only what it does not get: the exception passes through.
__attribute__((noinline)) long middle(int n)
{
	try {
		return thrower(n) + 1;
	} catch (const std::logic_error &) {
		return -1;
	}
}

__attribute__((noinline)) long catcher(int n)
{
	try {
		return middle(n);
	} catch (const std::runtime_error &) {
		return 100 + n;
	}
}

// noipa: a call that stays one, not a constant folded in
__attribute__((noipa)) long operator"" _cm(unsigned long long v)
{
	return static_cast<long>(v) * 10;
}

} // namespace

int main()
{
	Shape *shapes[6];
	long total = 0;

	for (int i = 0; i < 6; i++)
		shapes[i] = make(i);
	for (int round = 0; round < 3; round++)
		for (Shape *s : shapes)
			total += s->area();
	for (Shape *s : shapes)
		delete s;
	total += catcher(3) + catcher(2) + 42_cm;
	std::printf("%ld\n", total);
	return 0;
}
