/*
 * cli_bench_output.c - what `gpuscan bench` reports: every number formatted
 * once, then printed as the table (stdout) and written as CSV and JSON from
 * those same strings.
 */
#include <stdio.h>
#include <string.h>

#include "cli_bench.h"

/* ---- the numbers, formatted once -------------------------------------------------- */

static const char *kind_name(const gs_bench_case *c)
{
    return !c->scan ? "reduce" : c->kind == GS_EXCLUSIVE ? "exscan" : "scan";
}

/* The exact column (--exact; always in the files). */
static const char *exact_name(const gs_bench_case *c) { return c->exact ? "yes" : "no"; }

/* The ceiling a case is held against: streamed data on the GPU crosses the
 * host link (a scan's both ways at once), everything else the memory of its
 * backend. */
static double ceiling_of(const cli_bench_report *rep, const gs_bench_case *c)
{
    if (rep->backend == GS_BACKEND_CUDA && c->mode == GS_BENCH_STREAMED)
        return c->scan ? rep->slowest.duplex_gbps : rep->slowest.h2d_gbps;
    return rep->slowest.copy_gbps;
}

void cli_bench_format_row(const cli_bench_report *rep, cli_bench_row *row)
{
    const gs_bench_result *r = &row->r;
    snprintf(row->time_us, sizeof row->time_us, "%.2f", r->median * 1e6);
    snprintf(row->min_us, sizeof row->min_us, "%.2f", r->min * 1e6);
    snprintf(row->max_us, sizeof row->max_us, "%.2f", r->max * 1e6);
    snprintf(row->p99_us, sizeof row->p99_us, "%.2f", r->p99 * 1e6);
    snprintf(row->gbps_rank, sizeof row->gbps_rank, "%.3f", r->gbps_rank);
    snprintf(row->gbps_total, sizeof row->gbps_total, "%.3f", r->gbps_total);
    double ceiling = ceiling_of(rep, &row->c);
    if (ceiling > 0) snprintf(row->ceiling_pct, sizeof row->ceiling_pct, "%.1f", 100.0 * r->gbps_rank / ceiling);
    else snprintf(row->ceiling_pct, sizeof row->ceiling_pct, CLI_NO_VALUE);
    if (r->wrong >= 0) snprintf(row->wrong, sizeof row->wrong, "%lld", (long long)r->wrong);
    else snprintf(row->wrong, sizeof row->wrong, CLI_NO_VALUE);
}

void cli_bench_format_ceilings(cli_bench_report *rep)
{
    snprintf(rep->copy_gbps, sizeof rep->copy_gbps, "%.1f", rep->slowest.copy_gbps);
    /* the host link's ceilings are the CUDA backend's only */
    const int link = rep->backend == GS_BACKEND_CUDA;
    snprintf(rep->h2d_gbps, sizeof rep->h2d_gbps, link ? "%.1f" : CLI_NO_VALUE, rep->slowest.h2d_gbps);
    snprintf(rep->duplex_gbps, sizeof rep->duplex_gbps, link ? "%.1f" : CLI_NO_VALUE, rep->slowest.duplex_gbps);
}

void cli_bench_format_average(cli_bench_report *rep)
{
    snprintf(rep->avg, sizeof rep->avg, "%.3f", rep->avg_gbps_rank);
}

const char *cli_bench_verdict_name(cli_bench_verdict verdict)
{
    switch (verdict) {
    case CLI_BENCH_OK: return "ok";
    case CLI_BENCH_WRONG: return "wrong";
    case CLI_BENCH_BELOW_MIN_BW: return "below min-bw";
    case CLI_BENCH_ERROR: break;
    }
    return "error";
}

/* ---- the table --------------------------------------------------------------- */

void cli_bench_print_header(FILE *out, const cli_bench_report *rep)
{
    const cli_bench_args *a = rep->a;
    fprintf(out, "# gpuscan bench: %d rank(s), backend %s; %s\n", rep->ranks,
            gs_backend_name(rep->backend), gs_build_info());
    fprintf(out, "# counts are global elements split across the ranks; %lld timed runs after %lld warm-up, %lld checked; seed %llu\n",
            (long long)a->iters, (long long)a->warmup, (long long)a->check_iters,
            (unsigned long long)a->seed);
    for (int i = 0; i < rep->ranks; i++) {
        const gs_rank_info *r = &rep->info[i];
        fprintf(out, "#  rank %3d  host %s  local rank %d  ", r->rank, r->host, r->local_rank);
        if (r->device >= 0)
            fprintf(out, "GPU %d %s (PCI %s)  copy %.1f GB/s  h2d %.1f GB/s  h2d+d2h %.1f GB/s\n", r->device,
                    r->device_name, r->pci_bus_id, rep->ceilings[i].copy_gbps, rep->ceilings[i].h2d_gbps,
                    rep->ceilings[i].duplex_gbps);
        else
            fprintf(out, "cpu backend, %d thread(s)  copy %.1f GB/s\n", r->cpu_threads, rep->ceilings[i].copy_gbps);
    }
    if (rep->backend == GS_BACKEND_CUDA)
        fprintf(out, "# ceilings (slowest rank): resident data %s GB/s (device copy); streamed data: reductions %s GB/s\n"
                     "#   (pinned host to device), scans %s GB/s (pinned host to device and back at once)\n",
                rep->copy_gbps, rep->h2d_gbps, rep->duplex_gbps);
    else
        fprintf(out, "# ceiling (slowest rank): %s GB/s (host memory copy) for resident and streamed data\n",
                rep->copy_gbps);
    fprintf(out, "#\n# %12s %14s %5s %5s %7s %9s %11s", "elements", "bytes", "type", "op", "kind", "mode", "time(us)");
    if (a->extra_columns) fprintf(out, " %11s %11s %11s", "min(us)", "max(us)", "p99(us)");
    fprintf(out, " %11s %11s %7s %7s", "GB/s/rank", "GB/s", "%ceil", "#wrong");
    fprintf(out, a->exact ? " %5s\n" : "\n", "exact");
    fflush(out);
}

void cli_bench_print_row(FILE *out, const cli_bench_report *rep, const cli_bench_row *row)
{
    fprintf(out, "  %12lld %14llu %5s %5s %7s %9s %11s", (long long)row->c.n,
            (unsigned long long)row->r.bytes, gs_type_name(row->c.type), gs_op_name(row->c.op),
            kind_name(&row->c), gs_bench_mode_name(row->c.mode), row->time_us);
    if (rep->a->extra_columns) fprintf(out, " %11s %11s %11s", row->min_us, row->max_us, row->p99_us);
    fprintf(out, " %11s %11s %7s %7s", row->gbps_rank, row->gbps_total, row->ceiling_pct, row->wrong);
    fprintf(out, rep->a->exact ? " %5s\n" : "\n", exact_name(&row->c));
    fflush(out);
}

void cli_bench_print_footer(FILE *out, const cli_bench_report *rep)
{
    fprintf(out, "# average bandwidth per rank: %s GB/s over %d row(s)", rep->avg, rep->n_rows);
    if (rep->a->min_bw >= 0) fprintf(out, " (--min-bw %g)", rep->a->min_bw);
    fprintf(out, "\n# total #wrong: ");
    if (rep->checked) fprintf(out, "%lld in %d checked row(s)\n", (long long)rep->wrong_total, rep->checked);
    else fprintf(out, "%s (nothing checked%s)\n", CLI_NO_VALUE, rep->a->check_iters ? "" : ": -c 0");
    fprintf(out, "# result: %s\n", cli_bench_verdict_name(rep->verdict));
    fflush(out);
}

/* ---- CSV and JSON -------------------------------------------------------------- */

static const char *csv_header =
    "backend,ranks,elements,bytes,type,op,kind,mode,time_us,min_us,max_us,p99_us,"
    "gbps_rank,gbps_total,ceiling_pct,wrong,exact\n";

/* A printed field in CSV (empty) or JSON (null) where it has no number. */
static const char *csv_field(const char *s) { return strcmp(s, CLI_NO_VALUE) ? s : ""; }
static const char *json_field(const char *s) { return strcmp(s, CLI_NO_VALUE) ? s : "null"; }

void cli_bench_write_csv(FILE *f, const void *data)
{
    const cli_bench_report *rep = data;
    fputs(csv_header, f);
    for (int i = 0; i < rep->n_rows; i++) {
        const cli_bench_row *row = &rep->rows[i];
        fprintf(f, "%s,%d,%lld,%llu,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", gs_backend_name(rep->backend),
                rep->ranks, (long long)row->c.n, (unsigned long long)row->r.bytes, gs_type_name(row->c.type),
                gs_op_name(row->c.op), kind_name(&row->c), gs_bench_mode_name(row->c.mode), row->time_us,
                row->min_us, row->max_us, row->p99_us, row->gbps_rank, row->gbps_total,
                csv_field(row->ceiling_pct), csv_field(row->wrong), exact_name(&row->c));
    }
}

void cli_bench_write_json(FILE *f, const void *data)
{
    const cli_bench_report *rep = data;
    const cli_bench_args *a = rep->a;
    fprintf(f, "{\"command\": \"bench\", \"version\": \"%s\", \"build\": ", GS_VERSION_STRING);
    cli_json_string(f, gs_build_info());
    fprintf(f, ", \"backend\": \"%s\", \"ranks\": %d, \"iters\": %lld, \"warmup\": %lld, \"check_iters\": %lld, \"seed\": %llu,\n",
            gs_backend_name(rep->backend), rep->ranks, (long long)a->iters, (long long)a->warmup,
            (long long)a->check_iters, (unsigned long long)a->seed);
    fprintf(f, " \"devices\": [");
    for (int i = 0; i < rep->ranks; i++) {
        const gs_rank_info *r = &rep->info[i];
        fprintf(f, "%s\n  {\"rank\": %d, \"host\": ", i ? "," : "", r->rank);
        cli_json_string(f, r->host);
        fprintf(f, ", \"local_rank\": %d, \"device\": %d, \"name\": ", r->local_rank, r->device);
        cli_json_string(f, r->device >= 0 ? r->device_name : "cpu");
        fprintf(f, ", \"pci_bus_id\": ");
        cli_json_string(f, r->pci_bus_id);
        char copy[40], h2d[40], duplex[40];
        cli_format_real(copy, sizeof copy, rep->ceilings[i].copy_gbps, 6);
        cli_format_real(h2d, sizeof h2d, rep->ceilings[i].h2d_gbps, 6);
        cli_format_real(duplex, sizeof duplex, rep->ceilings[i].duplex_gbps, 6);
        fprintf(f, ", \"copy_gbps\": %s, \"h2d_gbps\": %s, \"duplex_gbps\": %s}", copy, h2d, duplex);
    }
    fprintf(f, "],\n \"ceiling\": {\"copy_gbps\": %s, \"h2d_gbps\": %s, \"duplex_gbps\": %s},\n \"rows\": [",
            rep->copy_gbps, json_field(rep->h2d_gbps), json_field(rep->duplex_gbps));
    for (int i = 0; i < rep->n_rows; i++) {
        const cli_bench_row *row = &rep->rows[i];
        fprintf(f, "%s\n  {\"elements\": %lld, \"bytes\": %llu, \"type\": \"%s\", \"op\": \"%s\", \"kind\": \"%s\", "
                   "\"mode\": \"%s\", \"time_us\": %s, \"min_us\": %s, \"max_us\": %s, \"p99_us\": %s, "
                   "\"gbps_rank\": %s, \"gbps_total\": %s, \"ceiling_pct\": %s, \"wrong\": %s, \"exact\": %s}",
                i ? "," : "", (long long)row->c.n, (unsigned long long)row->r.bytes, gs_type_name(row->c.type),
                gs_op_name(row->c.op), kind_name(&row->c), gs_bench_mode_name(row->c.mode), row->time_us,
                row->min_us, row->max_us, row->p99_us, row->gbps_rank, row->gbps_total,
                json_field(row->ceiling_pct), json_field(row->wrong), row->c.exact ? "true" : "false");
    }
    fprintf(f, "],\n \"avg_gbps_rank\": %s, \"wrong_total\": ", rep->avg);
    if (rep->checked) fprintf(f, "%lld", (long long)rep->wrong_total); else fputs("null", f);
    fprintf(f, ", \"min_bw\": ");
    if (a->min_bw >= 0) fprintf(f, "%.17g", a->min_bw); else fputs("null", f);
    fprintf(f, ", \"result\": \"%s\", \"error\": ", cli_bench_verdict_name(rep->verdict));
    cli_json_string(f, rep->error);
    fputs("}\n", f);
}
