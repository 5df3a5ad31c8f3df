/** @file wt_threads.c
 *  @brief Fork-join on pthreads for the weight pipeline's host steps (the
 *         CPU twin's passes, the dictionary merge).
 */
#include <pthread.h>

#include "error.h"
#include "wt_int.h"

#define MAX_THREADS 256

int xg_wt_run_threads(uint32_t n, void *(*fn)(void *), void *args, size_t size)
{
    pthread_t tid[MAX_THREADS];
    int started[MAX_THREADS] = {0};
    for (uint32_t t = 1; t < n; ++t)
        started[t] = !pthread_create(&tid[t], NULL, fn, (char *)args + t * size);
    fn(args);
    for (uint32_t t = 1; t < n; ++t) {
        if (started[t]) pthread_join(tid[t], NULL);
        else fn((char *)args + t * size);
    }
    return XG_OK;
}
