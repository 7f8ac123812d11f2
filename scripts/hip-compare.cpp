// hip-compare.cpp - load two HSA code objects of the same kernel (the compiler's own and the one
// `regsweep emit` wrote) with hipModuleLoad, run both on identical inputs, compare every output
// buffer byte for byte and time both (hipEvent, best of R launches after a warm-up).
// Needs a ROCm device; built and run by scripts/hip-compare.sh. Never run in CI (no GPU there).
//
// usage: hip-compare OWN.hsaco EMITTED.hsaco KERNEL GRIDX BLOCKX REPS ARG...
//   ARG: buf:BYTES (device buffer, filled with seeded pseudo-random bytes; compared after the run)
//        f32:VALUE  f64:VALUE  i32:VALUE  i64:VALUE (scalars, laid out with natural alignment)
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define HIP(x)                                                                              \
  do {                                                                                      \
    hipError_t err_ = (x);                                                                  \
    if (err_ != hipSuccess) {                                                               \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, hipGetErrorString(err_)); \
      exit(2);                                                                              \
    }                                                                                       \
  } while (0)

struct Arg {
  bool buf;
  size_t bytes;
  unsigned char scalar[8];
  size_t size;
};

static void put(std::vector<unsigned char> &kargs, const void *p, size_t n) {
  while (kargs.size() % n) kargs.push_back(0); // natural alignment
  const unsigned char *b = static_cast<const unsigned char *>(p);
  kargs.insert(kargs.end(), b, b + n);
}

struct Run {
  std::vector<void *> dev;
  std::vector<std::vector<unsigned char>> out;
  float best_ms = 1e30f;
};

static void run(const char *path, const char *kernel, unsigned gx, unsigned bx, int reps, const std::vector<Arg> &args,
                Run &r) {
  hipModule_t mod;
  hipFunction_t fn;
  HIP(hipModuleLoad(&mod, path));
  HIP(hipModuleGetFunction(&fn, mod, kernel));
  std::vector<unsigned char> kargs;
  unsigned seed = 12345;
  for (const Arg &a : args) {
    if (!a.buf) {
      put(kargs, a.scalar, a.size);
      continue;
    }
    std::vector<unsigned char> host(a.bytes);
    for (auto &c : host) c = (unsigned char)((seed = seed * 1103515245u + 12345u) >> 24);
    void *d;
    HIP(hipMalloc(&d, a.bytes));
    HIP(hipMemcpy(d, host.data(), a.bytes, hipMemcpyHostToDevice));
    r.dev.push_back(d);
    put(kargs, &d, sizeof d);
  }
  size_t ksize = kargs.size();
  void *config[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, kargs.data(), HIP_LAUNCH_PARAM_BUFFER_SIZE, &ksize,
                    HIP_LAUNCH_PARAM_END};
  // the first launch produces the compared outputs (inputs untouched before it)
  HIP(hipModuleLaunchKernel(fn, gx, 1, 1, bx, 1, 1, 0, nullptr, nullptr, config));
  HIP(hipDeviceSynchronize());
  size_t k = 0;
  for (const Arg &a : args)
    if (a.buf) {
      r.out.emplace_back(a.bytes);
      HIP(hipMemcpy(r.out.back().data(), r.dev[k++], a.bytes, hipMemcpyDeviceToHost));
    }
  hipEvent_t t0, t1;
  HIP(hipEventCreate(&t0));
  HIP(hipEventCreate(&t1));
  for (int i = 0; i < reps; i++) {
    HIP(hipEventRecord(t0));
    HIP(hipModuleLaunchKernel(fn, gx, 1, 1, bx, 1, 1, 0, nullptr, nullptr, config));
    HIP(hipEventRecord(t1));
    HIP(hipEventSynchronize(t1));
    float ms;
    HIP(hipEventElapsedTime(&ms, t0, t1));
    if (ms < r.best_ms) r.best_ms = ms;
  }
  for (void *d : r.dev) HIP(hipFree(d));
  HIP(hipModuleUnload(mod));
}

int main(int argc, char **argv) {
  if (argc < 7) {
    fprintf(stderr, "usage: %s OWN.hsaco EMITTED.hsaco KERNEL GRIDX BLOCKX REPS ARG...\n", argv[0]);
    return 2;
  }
  std::vector<Arg> args;
  for (int i = 7; i < argc; i++) {
    std::string s = argv[i];
    size_t c = s.find(':');
    if (c == std::string::npos) return fprintf(stderr, "bad argument '%s'\n", argv[i]), 2;
    std::string t = s.substr(0, c), v = s.substr(c + 1);
    Arg a{};
    if (t == "buf") a.buf = true, a.bytes = strtoull(v.c_str(), nullptr, 10);
    else if (t == "i32") { int x = atoi(v.c_str()); memcpy(a.scalar, &x, 4); a.size = 4; }
    else if (t == "i64") { long long x = atoll(v.c_str()); memcpy(a.scalar, &x, 8); a.size = 8; }
    else if (t == "f32") { float x = strtof(v.c_str(), nullptr); memcpy(a.scalar, &x, 4); a.size = 4; }
    else if (t == "f64") { double x = strtod(v.c_str(), nullptr); memcpy(a.scalar, &x, 8); a.size = 8; }
    else return fprintf(stderr, "bad argument type '%s'\n", t.c_str()), 2;
    args.push_back(a);
  }
  unsigned gx = (unsigned)atoi(argv[4]), bx = (unsigned)atoi(argv[5]);
  int reps = atoi(argv[6]);
  Run own, emitted;
  run(argv[1], argv[3], gx, bx, reps, args, own);
  run(argv[2], argv[3], gx, bx, reps, args, emitted);
  size_t differ = 0, total = 0;
  for (size_t b = 0; b < own.out.size(); b++)
    for (size_t i = 0; i < own.out[b].size(); i++, total++) differ += own.out[b][i] != emitted.out[b][i];
  printf("outputs: %zu of %zu bytes differ%s\n", differ, total, differ ? "" : " (identical)");
  printf("time: own %.4f ms, emitted %.4f ms (best of %d), emitted/own %.3f\n", own.best_ms, emitted.best_ms, reps,
         emitted.best_ms / own.best_ms);
  return differ ? 1 : 0;
}
