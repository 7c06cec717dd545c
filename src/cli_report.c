/* cli_report.c - what reduce, scan and info print on rank 0: the human
 * summary, the JSON report, the ranks of `info`. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* A value as text: exact integers; floats with 17 significant digits, so
 * they read back to the same double, and always as floats ("0.0", not "0",
 * which Python's json would read as an int). `json` quotes what JSON cannot
 * hold: NaN and infinities are the strings "nan", "inf", "-inf". */
static void format_value(char *buf, size_t len, const gs_value *v, int json)
{
    switch (v->type) {
    case GS_I32: case GS_I64: snprintf(buf, len, "%lld", (long long)v->v.i); break;
    case GS_U32: case GS_U64: snprintf(buf, len, "%llu", (unsigned long long)v->v.u); break;
    default:
        if (isnan(v->v.f)) snprintf(buf, len, json ? "\"nan\"" : "nan");
        else if (isinf(v->v.f)) snprintf(buf, len, json ? "\"%sinf\"" : "%sinf", v->v.f < 0 ? "-" : "");
        else cli_format_real(buf, len, v->v.f, 17);
    }
}

/* A measured time, rate or ratio in the JSON report, as a float. */
static void put_real(FILE *f, const char *key, double v, int digits)
{
    char buf[40];
    cli_format_real(buf, sizeof buf, v, digits);
    fprintf(f, ", \"%s\": %s", key, buf);
}

static double compute_gbps(const gs_report *rep)
{
    double t = rep->phase_max[GS_PHASE_COMPUTE];
    return t > 0 ? (double)rep->bytes / t * 1e-9 : 0.0;
}

/* The kernels of the command's own pass (a scan's reduction pass on several
 * ranks runs the default reduction). */
static const char *command_algo(const cli_args *a)
{
    const char *name = a->command == CLI_SCAN ? a->cfg.scan_kernel : a->cfg.reduce_kernel;
    return name ? name : "default";
}

static void describe_devices(char *buf, size_t len, const gs_report *rep, const gs_rank_info *ranks)
{
    if (rep->backend != GS_BACKEND_CUDA) {
        snprintf(buf, len, "%d x %d CPU thread(s)", rep->ranks, ranks[0].cpu_threads);
        return;
    }
    /* "2 x NVIDIA H200" when all ranks have the same model, else each one */
    int same = 1;
    for (int i = 1; i < rep->ranks; i++) same &= strcmp(ranks[i].device_name, ranks[0].device_name) == 0;
    if (same) { snprintf(buf, len, "%d x %s", rep->ranks, ranks[0].device_name); return; }
    size_t used = 0;
    for (int i = 0; i < rep->ranks && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", ranks[i].device_name);
}

void cli_print_summary(FILE *out, const cli_args *a, const gs_report *rep, const gs_value *result,
                       const gs_rank_info *ranks, const char *cpu_why)
{
    char value[64], devices[512];
    describe_devices(devices, sizeof devices, rep, ranks);
    int scan = a->command == CLI_SCAN;
    fprintf(out, "# gpuscan %s: %s%s of %lld %s elements (%s) on %d rank(s), backend %s: %s\n",
            scan ? "scan" : "reduce", scan ? (a->kind == GS_EXCLUSIVE ? "exclusive " : "inclusive ") : "",
            gs_op_name(a->op), (long long)rep->n, gs_type_name(rep->type),
            a->src.path ? a->src.path : "generated", rep->ranks, gs_backend_name(rep->backend), devices);
    if (*cpu_why) fprintf(out, "# on the CPU backend: %s\n", cpu_why);
    if (scan) {
        format_value(value, sizeof value, &rep->last, 0);
        fprintf(out, "output  %s (%s)\nlast    %s\n", a->out_path, gs_type_name(rep->out_type),
                rep->n ? value : "(empty)");
    } else {
        format_value(value, sizeof value, result, 0);
        fprintf(out, "result  %s (%s)\n", value, gs_type_name(result->type));
    }
    fprintf(out, "time    %.6f s wall, %.6f s compute (slowest rank): %.2f GB/s compute, %.2f GB/s wall\n",
            rep->seconds, rep->phase_max[GS_PHASE_COMPUTE], compute_gbps(rep),
            rep->seconds > 0 ? (double)rep->bytes / rep->seconds * 1e-9 : 0.0);
    fprintf(out, "phases  (min/avg/max s over ranks)");
    for (int p = 0; p < GS_PHASE_COUNT; p++)
        if (rep->phase_max[p] > 0)
            fprintf(out, "  %s %.4f/%.4f/%.4f", gs_phase_name((gs_phase)p), rep->phase_min[p],
                    rep->phase_avg[p], rep->phase_max[p]);
    fputc('\n', out);
    fprintf(out, "pipeline  %s, %s kernels, chunks of %lld elements, depth %d, input read %dx; overlap %.2f "
                 "(sum of phase times / wall time)\n",
            rep->streamed ? "streamed" : "resident", command_algo(a), (long long)rep->chunk,
            rep->depth, rep->input_passes, rep->overlap);
    if (rep->verified) fprintf(out, "#wrong  %lld\n", (long long)rep->wrong);
}

static void write_json(FILE *f, const cli_args *a, const gs_report *rep, const gs_value *result,
                       const gs_rank_info *ranks)
{
    char value[64];
    int scan = a->command == CLI_SCAN;
    fprintf(f, "{\"command\": \"%s\", \"op\": \"%s\", \"type\": \"%s\", \"n\": %lld, \"ranks\": %d, "
               "\"backend\": \"%s\"",
            scan ? "scan" : "reduce", gs_op_name(a->op), gs_type_name(rep->type), (long long)rep->n,
            rep->ranks, gs_backend_name(rep->backend));
    put_real(f, "seconds", rep->seconds, 9);
    put_real(f, "compute_seconds", rep->phase_max[GS_PHASE_COMPUTE], 9);
    fprintf(f, ", \"bytes\": %llu", (unsigned long long)rep->bytes);
    put_real(f, "compute_gbps", compute_gbps(rep), 6);
    if (scan) {
        format_value(value, sizeof value, &rep->last, 1);
        fprintf(f, ", \"exclusive\": %s, \"output\": ", a->kind == GS_EXCLUSIVE ? "true" : "false");
        cli_json_string(f, a->out_path);
        fprintf(f, ", \"output_type\": \"%s\", \"last\": %s", gs_type_name(rep->out_type),
                rep->n ? value : "null");
    } else {
        format_value(value, sizeof value, result, 1);
        fprintf(f, ", \"result_type\": \"%s\", \"result\": %s", gs_type_name(result->type), value);
    }
    if (rep->verified) fprintf(f, ", \"wrong\": %lld", (long long)rep->wrong);
    fprintf(f, ", \"algo\": \"%s\", \"mode\": \"%s\", \"chunk\": %lld, \"depth\": %d, \"input_passes\": %d",
            command_algo(a), rep->streamed ? "streamed" : "resident", (long long)rep->chunk,
            rep->depth, rep->input_passes);
    put_real(f, "overlap", rep->overlap, 6);
    fprintf(f, ", \"phases\": {");
    for (int p = 0; p < GS_PHASE_COUNT; p++) {
        /* put_real's leading ", " would open the object wrongly: the first key by hand */
        char min[40];
        cli_format_real(min, sizeof min, rep->phase_min[p], 9);
        fprintf(f, "%s\"%s\": {\"min\": %s", p ? ", " : "", gs_phase_name((gs_phase)p), min);
        put_real(f, "avg", rep->phase_avg[p], 9);
        put_real(f, "max", rep->phase_max[p], 9);
        fputc('}', f);
    }
    fprintf(f, "}, \"devices\": [");
    for (int i = 0; i < rep->ranks; i++) {
        fprintf(f, "%s{\"rank\": %d, \"host\": ", i ? ", " : "", i);
        cli_json_string(f, ranks[i].host);
        fprintf(f, ", \"device\": %d, \"name\": ", ranks[i].device);
        cli_json_string(f, ranks[i].device < 0 ? "cpu" : ranks[i].device_name);
        fputs(", \"pci_bus_id\": ", f);
        cli_json_string(f, ranks[i].pci_bus_id);
        fputc('}', f);
    }
    fprintf(f, "]}\n");
}

struct json_job { const cli_args *a; const gs_report *rep; const gs_value *result; const gs_rank_info *ranks; };

static void write_json_job(FILE *f, const void *data)
{
    const struct json_job *j = data;
    write_json(f, j->a, j->rep, j->result, j->ranks);
}

int cli_write_json(const cli_args *a, const gs_report *rep, const gs_value *result,
                   const gs_rank_info *ranks, char *err, size_t errlen)
{
    const struct json_job job = {a, rep, result, ranks};
    return cli_write_report(a->json_path, "JSON", write_json_job, &job, err, errlen);
}

/* {"error": MESSAGE, "status": STATUS}: data is a two-string array. */
static void write_json_error(FILE *f, const void *data)
{
    const char *const *texts = data;
    fputs("{\"error\": ", f);
    cli_json_string(f, texts[0]);
    fputs(", \"status\": ", f);
    cli_json_string(f, texts[1]);
    fputs("}\n", f);
}

int cli_write_json_error(const cli_args *a, const char *message, const char *status, char *err, size_t errlen)
{
    const char *texts[2] = {message, status};
    return cli_write_report(a->json_path, "JSON", write_json_error, texts, err, errlen);
}

void cli_print_info(FILE *out, int size, const gs_rank_info *ranks, gs_backend backend, const char *cpu_why)
{
    fprintf(out, "%s\nMPI ranks: %d, backend: %s\n", gs_build_info(), size, gs_backend_name(backend));
    if (*cpu_why) fprintf(out, "on the CPU backend because %s\n", cpu_why);
    for (int i = 0; i < size; i++) {
        const gs_rank_info *r = &ranks[i];
        fprintf(out, "rank %d  host %s  local rank %d  ", r->rank, r->host, r->local_rank);
        if (r->device >= 0)
            fprintf(out, "GPU %d: %s, PCI %s, %.1f GiB\n", r->device, r->device_name, r->pci_bus_id,
                    (double)r->device_mem_bytes / 1073741824.0);
        else
            fprintf(out, "cpu backend, %d thread(s)\n", r->cpu_threads);
    }
}
