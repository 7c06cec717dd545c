#include "gs_test.h"

#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

const int64_t gs_test_sizes[] = {0, 1, 2, 3, 31, 32, 33, 1000, 1023, 1025, 65537, 1000003};
const int gs_test_nsizes = (int)(sizeof gs_test_sizes / sizeof gs_test_sizes[0]);

static int test_rank, test_size;
static uint64_t test_seed;

int gs_test_rank(void) { return test_rank; }
int gs_test_size(void) { return test_size; }
uint64_t gs_test_seed(void) { return test_seed; }

static uint64_t pick_seed(void)
{
    const char *env = getenv("GS_TEST_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);
    /* every rank uses rank 0's seed, so a replay reproduces all ranks */
    MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    return seed;
}

int gs_test_main(int argc, char **argv, gs_test_register_fn register_suites)
{
    (void)argc; (void)argv;
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "%s: MPI_Init failed\n", argv[0]);
        return 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &test_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &test_size);
    test_seed = pick_seed();
    if (test_rank == 0)
        printf("%s: %d rank(s), GS_TEST_SEED=%llu\n", argv[0], test_size,
               (unsigned long long)test_seed);

    long failures = 0;
    if (CU_initialize_registry() != CUE_SUCCESS) {
        fprintf(stderr, "rank %d: CUnit registry: %s\n", test_rank, CU_get_error_msg());
        failures = 1;
    } else if (register_suites() != 0 || CU_get_error() != CUE_SUCCESS) {
        /* a refusal of our own (an unknown suite name) printed its reason */
        if (CU_get_error() != CUE_SUCCESS)
            fprintf(stderr, "rank %d: registering suites failed: %s\n", test_rank, CU_get_error_msg());
        else
            fprintf(stderr, "rank %d: registering suites failed\n", test_rank);
        failures = 1;
    } else {
        CU_basic_set_mode(test_rank == 0 ? CU_BRM_VERBOSE : CU_BRM_SILENT);
        CU_basic_run_tests();
        if (test_rank == 0) CU_basic_show_failures(CU_get_failure_list());
        failures = (long)CU_get_number_of_failure_records();
        if (failures && test_rank != 0) {
            /* rank 0 prints the summary; other ranks name their failures */
            for (CU_pFailureRecord f = CU_get_failure_list(); f; f = f->pNext)
                fprintf(stderr, "rank %d: %s:%u: %s\n", test_rank,
                        f->strFileName ? f->strFileName : "?", f->uiLineNumber,
                        f->strCondition ? f->strCondition : "");
        }
    }
    CU_cleanup_registry();

    long total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (test_rank == 0)
        printf("\n%s: %ld failure record(s) over %d rank(s)\n", argv[0], total, test_size);
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}
