/* lowered.c - the lines of a lowering into a cubin and of nvdisasm's crosscheck, for `lower` and
 * `regalloc ... -o OUT.cubin` alike (the work: mcode/lower.c). */
#include "cli/cli.h"
#include <stdio.h>
#include <stdlib.h>

bool rs_lower_probe_only(void) { /* RS_LOWER_PROBE_ONLY=1: a measurement of the probe (docs/lower.md) */
  const char *v = getenv("RS_LOWER_PROBE_ONLY");
  return v && v[0] == '1';
}

void rs_print_xcheck(const rs_crosscheck_stats *x) {
  bool ok = rs_crosscheck_ok(x);
  printf("crosscheck (nvdisasm): %u functions, %u instructions, %u mismatches; other lines %u, %u differ; register "
         "counts %u/%u as meant, -plr's registers within the count on %u, past it on %u; -plr live-before rows %u: %u "
         "fewer, %u more, %u other uniform counts: %s\n",
         x->funcs, x->insts, x->mismatches, x->attrs, x->attr_mismatches, x->regcount_ok, x->funcs, x->plr_ok,
         x->plr_over, x->live_rows, x->live_fewer, x->live_more, x->uniform_rows, ok ? "ok" : "MISMATCH");
  if (!ok) fprintf(stderr, "crosscheck: first mismatch: %s\n", x->first);
}

int rs_lower_print(const rs_mc *mc, const rs_mc_lower_opts *o, const rs_mc_lowered *r, int status, const rs_err *e) {
  if (r->hazards && !o->out)
    printf("lower: %u scoreboard hazards (first: %s): checking the encoding only, no cubin is kept\n", r->hazards,
           r->hazard);
  if (r->lowered) {
    printf("lower: %s: sm_%u, %u functions, %u instructions, %u re-encoded (%u register fields) in %u functions, "
           "registers", r->out, mc->cub.sm, r->st.funcs, r->st.insts, r->st.changed, r->st.tokens, r->st.funcs_changed);
    for (uint32_t k = 0; k < r->st.funcs && k < 8; k++) printf(" %u -> %u", r->st.regs_before[k], r->st.regs_after[k]);
    if (r->spill_rewritten)
      printf(", %u spill accesses rewritten (%u MOV, %u NOP; 0 hazards with their control bits)", r->spill_rewritten,
             r->spill_movs, r->spill_nops);
    printf("%s (%.2f ms)\n", r->identical ? ", byte-identical to the input" : "", r->ms);
  }
  if (r->st.probed_forms) /* fields nvdisasm's probe found (cubin/probe.c) */
    printf("probe: %u forms probed (the table could not write or misread them, or RS_LOWER_PROBE_ONLY), %u fields "
           "found (%u desc[]), %u instructions written through them, %u a table row misread; %u variants in %u nvdisasm "
           "runs (%u rejected), %.0f ms\n",
           r->st.probed_forms, r->st.probe.fields, r->st.probe.descs, r->st.probed, r->st.contradicted, r->st.probe.variants,
           r->st.probe.runs, r->st.probe.rejected, r->st.probe.ms);
  for (uint32_t k = 0; k < r->nkept; k++)
    printf("kept: %s: ptxas's code and register count: %s\n", mc->cub.funcs[r->kept[k].func].name, r->kept[k].why);
  if (r->crosschecked) rs_print_xcheck(&r->x);
  if (status && e->msg[0]) fprintf(stderr, "regsweep lower: %s%s\n", r->xcheck_error ? "crosscheck: " : "", e->msg);
  return status;
}
