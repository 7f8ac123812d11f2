/* sground.c - the instance of a prera row whose values LLVM split or spilled in its SGPR round
 * (llc's first greedy: postsplit names those pieces only by physical register): the MIR that
 * round's greedy printed, its spill pseudos lowered as LLVM lowered them (docs/real-suite.md). */
#include "corpus/truth.h"
#include "corpus/grid.h"
#include "front/front.h"
#include "llvm/llc.h"
#include "mir/sgspill.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The SGPR round's MIR as an instance (mir/sgspill.c). Where the round spilled (SI_SPILL_S*_SAVE/
 * _RESTORE and a stack slot) LLVM lowered each pseudo to lane writes/reads of a VGPR before its
 * vector round (SILowerSGPRSpills), and postsplit holds them: the instance takes them in the
 * pseudos' places, so the spilled value keeps one register, free between the lane write and the
 * lane read, and the lane VGPR is LLVM's (without them no register holds the value across the
 * gap, and no one-register map would be LLVM's). Greedy's bundles of copies are flattened. */
static rs_module *lanes_instance(const rs_module *g, const rs_func *ps, const rs_alignment *al, const char *path,
                                 const char *arch, char *why, size_t nwhy) {
  const rs_func *gf = g->funcs[0];
  rs_loose lo;
  rs_err pe = {{0}};
  if (rs_align_loose(gf, ps, &lo, &pe)) {
    snprintf(why, nwhy, "spilled; re-run does not align: %.80s", pe.msg);
    return NULL;
  }
  rs_preg *as = rs_xcalloc(gf->nvregs + 1, sizeof *as);
  rs_truth_prera_linked(gf, ps, al, as);
  size_t len = 0;
  char w[128] = "";
  char *text = rs_mir_sgpr_spill_lanes(gf, ps, &lo, as, &len, w, sizeof w);
  rs_loose_free(&lo);
  free(as);
  rs_module *m = text ? rs_module_parse(path, text, len, RS_SRC_MIR, arch, &pe) : NULL;
  if (!text) snprintf(why, nwhy, "spilled, not as LLVM's lanes: %.90s", w);
  else if (!m || m->nfuncs != 1) {
    snprintf(why, nwhy, "spill lanes not read back: %.80s", m ? "not one function" : pe.msg);
    rs_module_free(m);
    m = NULL;
  }
  return m;
}

/* The SGPR round's instance: the MIR of that round's greedy, sground.mir, where its split copies
 * and rematerialized constants are values of their own and its spill pseudos LLVM's lane
 * instructions. The compile job writes it (`-stop-after=greedy` from the bitcode: LLVM's own
 * run); for units compiled before, it is re-run from prera.mir (`-start-before=greedy
 * -stop-after=greedy`), which may allocate otherwise, and the check below tells. The truth is
 * LLVM's register per value, as for any prera row, or the split instance over it for the vector
 * round's splits. NULL with the reason in why where neither keeps every constraint. */
rs_module *rs_truth_sground_instance(const char *arch, int opt, const char *dir, const rs_func *ps,
                                     const rs_alignment *al, rs_problem **prob, char **json, char *why, size_t nwhy) {
  char path[1200], tmp[1300], in[1200], llc[16], mcpu[64], optl[16];
  snprintf(path, sizeof path, "%s/sground.mir", dir);
  if (access(path, F_OK)) {
    snprintf(in, sizeof in, "%s/prera.mir", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    snprintf(llc, sizeof llc, "llc-%d", rs_arch_llvm(arch));
    snprintf(mcpu, sizeof mcpu, "-mcpu=%s", arch);
    snprintf(optl, sizeof optl, "-O%d", opt);
    char *argv[] = {llc, "-march=amdgcn", mcpu, optl, "-start-before=greedy", "-stop-after=greedy", in, "-o", tmp, NULL};
    char *err = NULL;
    rs_err pe = {{0}};
    int st = rs_emit_run(argv, 120, &err, &pe);
    if (st || rename(tmp, path)) {
      snprintf(why, nwhy, "not re-run: %.80s", st < 0 ? pe.msg : err ? err : "");
      free(err);
      unlink(tmp);
      return NULL;
    }
    free(err);
  }
  rs_err pe = {{0}};
  rs_module *g = rs_module_load(path, arch, &pe), *m = NULL;
  if (!g || g->nfuncs != 1) {
    snprintf(why, nwhy, "re-run not read: %.80s", g ? "not one function" : pe.msg);
    rs_module_free(g);
    return NULL;
  }
  rs_module *l = lanes_instance(g, ps, al, path, arch, why, nwhy); /* spills as LLVM lowered them */
  rs_module_free(g);
  if (!l) return NULL;
  g = l;
  const rs_func *gf = g->funcs[0];
  /* llc re-run from prera.mir does not always allocate as the run that printed postsplit did (the
   * MIR round trip drops live-ins and hints): its MIR stands for LLVM's only where each of its
   * instructions has its counterpart in postsplit, in order, but for the copies LLVM's SGPR
   * rewriter deleted (identities in LLVM's map: rs_truth_prera checks them), and postsplit adds
   * nothing but copies between virtual registers (the vector round's); then its pieces are LLVM's and their registers LLVM's */
  rs_loose lo;
  if (rs_align_loose(gf, ps, &lo, &pe)) {
    snprintf(why, nwhy, "re-run does not align: %.80s", pe.msg);
    rs_module_free(g);
    return NULL;
  }
  uint8_t *paired = rs_xcalloc(gf->ninsts + 1, 1);
  uint32_t odd = 0;
  for (uint32_t j = 0; j < ps->ninsts; j++)
    if (lo.pair[j] >= 0) paired[lo.pair[j]] = 1;
    else {
      const rs_inst *in = &ps->insts[j];
      bool vcopy = !strcmp(rs_func_opcode(ps, in), "COPY");
      for (uint32_t k = 0; k < in->nops && vcopy; k++) vcopy = ps->ops[in->first_op + k].kind == RS_OP_VREG;
      odd += !vcopy;
    }
  rs_loose_free(&lo);
  rs_preg *as = rs_xcalloc(gf->nvregs + 1, sizeof *as);
  uint32_t nsplit = rs_truth_prera(gf, ps, al, as), nm = 0, bad = 0;
  for (uint32_t i = 0; i < gf->ninsts; i++) /* a COPY not kept: rs_truth_prera checks it is an identity */
    odd += !paired[i] && strcmp(rs_func_opcode(gf, &gf->insts[i]), "COPY");
  free(paired);
  if (odd) {
    snprintf(why, nwhy, "re-run not LLVM's (%u instructions)", odd);
    free(as);
    rs_module_free(g);
    return NULL;
  }
  rs_problem *p = nsplit ? NULL : rs_problem_build(gf, &pe);
  if (nsplit) m = rs_truth_split_instance(gf, ps, al, as, path, arch, prob, json, why, nwhy);
  else if (!p) snprintf(why, nwhy, "re-run: %.80s", pe.msg);
  else if ((bad = rs_truth_check(p, as, &nm)) == 0 && nm == 0) {
    *json = rs_truth_json(p, as), *prob = p, m = g, g = NULL;
    p = NULL;
  } else
    snprintf(why, nwhy, "re-run: LLVM's map breaks %u constraints (%u outside the class)",
             bad == UINT32_MAX ? 0 : bad, nm);
  rs_problem_free(p);
  free(as);
  rs_module_free(g);
  return m;
}

