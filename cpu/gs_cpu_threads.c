/*
 * gs_cpu_threads.c - how many OpenMP threads the CPU backend (and the verify
 * reference) start on this rank. OMP_NUM_THREADS, when set, decides.
 * Otherwise a rank takes its share of the cores its node's ranks may use
 * together, and no more than the cores it may use itself: with Open MPI's
 * default binding each rank is bound to its own core(s) and uses those;
 * with `--bind-to none` every rank may use every core, and the cores are
 * split between the node's ranks instead of each rank starting one thread
 * per core (which oversubscribes the node local_size times over).
 *
 * The MPI layer knows the node's ranks, this file the cores: the context
 * joins the two (gs_context.c), so that cpu/ needs no MPI.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* sched_getaffinity, CPU_ISSET */
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gs_cpu.h"

int gs_cpu_rank_threads(int mine, int node, int local_size)
{
    if (mine < 1) mine = 1;
    const int share = local_size > 0 ? node / local_size : node;
    return share < 1 ? 1 : share < mine ? share : mine;
}

/* Set bit `cpu` of mask[0..bytes). */
static void set_bit(unsigned char *mask, size_t bytes, int cpu)
{
    if ((size_t)cpu / 8 < bytes) mask[cpu / 8] |= (unsigned char)(1u << (cpu % 8));
}

int gs_cpu_affinity(unsigned char *mask, size_t bytes)
{
    memset(mask, 0, bytes);
    int count = 0;
#ifdef __linux__
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
            if (!CPU_ISSET(cpu, &set)) continue;
            set_bit(mask, bytes, cpu);
            count++;
        }
        if (count > 0) return count;
    }
#endif
    /* no affinity to read (another system, or more CPUs than a cpu_set_t
     * holds): every online CPU */
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    count = online > 0 && online < 1 << 20 ? (int)online : 1;
    for (int cpu = 0; cpu < count; cpu++) set_bit(mask, bytes, cpu);
    return count;
}

int gs_cpu_mask_count(const unsigned char *mask, size_t bytes)
{
    int count = 0;
    for (size_t i = 0; i < bytes; i++)
        for (unsigned b = mask[i]; b; b &= b - 1) count++;
    return count;
}

int gs_cpu_set_team(int mine, int node, int local_size)
{
#ifdef _OPENMP
    const char *user = getenv("OMP_NUM_THREADS");
    if (!user || !*user) omp_set_num_threads(gs_cpu_rank_threads(mine, node, local_size));
#else
    (void)mine;
    (void)node;
    (void)local_size;
#endif
    return gs_cpu_threads();
}
