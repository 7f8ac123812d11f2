/* bench_coord.c - coordinator capacity: how many shards per second rank 0 hands to idle
 * workers that finish instantly (the worst case for the coordinator). Run it oversubscribed:
 *   mpirun -np 33 build-release/bench/bench_coord [--quick] [shards]   (--quick: 2,000 shards)
 * (scripts/bench.sh runs it so: bench/benches.tsv says how each bench is launched).
 * Rank 0 is the real coordinator (rs_coordinate); workers speak the same protocol as rs_work
 * (REQ for one shard, WORK, DONE, ... BYE) but report each shard done at once. */
#include "bench/bench.h"
#include "coordinator/coord.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  bool quick = rs_bench_take_flag(&argc, argv, "--quick");
  if (size < 2) { /* a coordinator with no worker would wait for ever */
    if (rank == 0) fprintf(stderr, "bench_coord: needs workers: mpirun -np 33 %s (got %d process)\n", argv[0], size);
    MPI_Finalize();
    return 2;
  }
  uint32_t nshards = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : quick ? 2000 : 200000;
  /* a plan of nshards one-instance shards */
  uint32_t *inst = malloc(sizeof *inst * nshards);
  uint64_t *cost = malloc(sizeof *cost * nshards);
  for (uint32_t i = 0; i < nshards; i++) inst[i] = i, cost[i] = 1;
  rs_plan pl;
  rs_plan_make(&pl, inst, cost, nshards, 1, 1, 1, 1);
  if (rank == 0) {
    uint32_t *todo = malloc(sizeof *todo * pl.nshards);
    for (uint32_t i = 0; i < pl.nshards; i++) todo[i] = i;
    rs_progress pg;
    memset(&pg, 0, sizeof pg);
    pg.start = rs_now();
    pg.every_s = 1e9;
    pg.last_print = rs_now();
    rs_err e;
    double t0 = rs_now();
    rs_coordinate(MPI_COMM_WORLD, &pl, todo, pl.nshards, NULL, &pg, &e);
    double dt = rs_now() - t0;
    printf("coordinator: %u shards to %d idle workers in %.3f s: %.0f shards/s\n", pl.nshards, size - 1, dt,
           pl.nshards / dt);
    printf("at one shard per worker every 60 s, that serves %.0f workers (1,000 GPUs need %.1f shards/s)\n",
           pl.nshards / dt * 60, 1000.0 / 60);
    free(todo);
  } else {
    rs_msg m;
    for (;;) { /* ask for one shard at a time (the worst case), report it done at once */
      memset(&m, 0, sizeof m);
      m.want = 1;
      MPI_Send(&m, sizeof m, MPI_BYTE, 0, RS_TAG_REQ, MPI_COMM_WORLD);
      MPI_Recv(&m, sizeof m, MPI_BYTE, 0, RS_TAG_WORK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      rs_msg d;
      memset(&d, 0, sizeof d);
      for (uint32_t i = 0; i < m.nshards; i++) {
        d.shard = m.shards[i];
        MPI_Send(&d, sizeof d, MPI_BYTE, 0, RS_TAG_DONE, MPI_COMM_WORLD);
      }
      if (!m.more) break;
    }
    memset(&m, 0, sizeof m);
    MPI_Send(&m, sizeof m, MPI_BYTE, 0, RS_TAG_BYE, MPI_COMM_WORLD);
  }
  rs_plan_free(&pl);
  free(inst);
  free(cost);
  MPI_Finalize();
  return 0;
}
