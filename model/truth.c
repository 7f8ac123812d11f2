/* truth.c - builtin:truth: replays the instance's ground truth (LLVM's allocation). Instances
 * without one (NVIDIA, split by LLVM) get infra attempts saying so. */
#include "model/model.h"
#include <stdio.h>
#include <string.h>

static int open_(rs_model *m, rs_err *e) {
  (void)m, (void)e;
  return 0;
}

static int generate(rs_model *m, const rs_gen_input *in, uint32_t first, uint32_t n, const uint64_t *seeds,
                    rs_gen *out, rs_err *e) {
  (void)m, (void)first, (void)seeds, (void)e;
  for (uint32_t k = 0; k < n; k++) {
    if (in->truth) {
      out[k].text = rs_xstrndup(in->truth, strlen(in->truth));
      out[k].finish = RS_FINISH_STOP;
    } else {
      out[k].infra = true;
      snprintf(out[k].error, sizeof out[k].error, "%s has no ground truth", in->id);
    }
  }
  return 0;
}

const rs_model_ops rs_model_truth = {"builtin:truth", open_, generate, NULL, false};
