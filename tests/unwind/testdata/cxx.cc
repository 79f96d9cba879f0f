// C++ built with -fno-exceptions -O2 -fomit-frame-pointer: virtual calls,
// template recursion, lambdas through std::function, and libstdc++'s own
// frames (std::sort calling our comparator, std::ofstream calling write()).
#include <algorithm>
#include <fstream>
#include <functional>
#include <vector>

extern "C" int ext_check(int max);
extern "C" void ext_init(void);
extern "C" int ext_report(const char *name);

static volatile int sink;

struct Shape {
  virtual ~Shape() = default;
  virtual int visit(int depth) const = 0;
};
struct Square : Shape {
  const Shape *next = nullptr;
  __attribute__((noinline)) int visit(int depth) const override {
    int r = depth == 0 || !next ? ext_check(64) : next->visit(depth - 1);
    sink = r;
    return r + depth;
  }
};
struct Circle : Shape {
  const Shape *next = nullptr;
  __attribute__((noinline)) int visit(int depth) const override {
    volatile char pad[24];
    pad[depth % 24] = 1;
    int r = depth == 0 || !next ? ext_check(64) : next->visit(depth - 1);
    return r + pad[depth % 24];
  }
};

template <int N> struct Unroll {
  __attribute__((noinline)) static int run(const std::function<int(int)> &f) {
    int r = Unroll<N - 1>::run(f);
    sink = r;
    return r + N;
  }
};
template <> struct Unroll<0> {
  __attribute__((noinline)) static int run(const std::function<int(int)> &f) { return f(0); }
};

int main() {
  ext_init();
  Square s1, s2;
  Circle c1, c2;
  s1.next = &c1;
  c1.next = &s2;
  s2.next = &c2;
  c2.next = &s1;
  for (int d = 0; d < 40; d += 3) s1.visit(d);

  int calls = 0;
  std::function<int(int)> leaf = [&](int k) { return ext_check(64) + k + calls++; };
  Unroll<12>::run(leaf);

  std::vector<int> v;
  for (int i = 0; i < 64; i++) v.push_back((i * 37) % 64);
  int compares = 0;
  std::sort(v.begin(), v.end(), [&](int a, int b) {
    if (compares++ % 50 == 0) ext_check(64);
    return a < b;
  });
  // libstdc++'s filebuf calls write() when its buffer fills or on flush.
  std::ofstream out("/dev/null");
  for (int i = 0; i < 20; i++) {
    out << "line " << i << '\n';
    out.flush();
  }
  out.close();
  return ext_report("cxx");
}
