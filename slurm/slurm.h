/* slurm.h - the Slurm job script template of `regsweep slurm submit` (docs/slurm.md). */
#ifndef RS_SLURM_H
#define RS_SLURM_H

/* slurm/regsweep.sbatch.in, built in (slurm/embed.sh regenerates slurm/template.c from it). The
 * lines @SBATCH@ and @CONFIG@ are replaced by the #SBATCH directives and the shell variables. */
extern const char rs_slurm_template[];

#endif
