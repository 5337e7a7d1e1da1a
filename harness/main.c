/* ggemm: the command-line harness. `ggemm --help` lists the commands. */
#include <stdio.h>

#include "gg_commands.h"

int main(int argc, char **argv) {
    GgOptions o;
    char err[512];
    if (gg_parse_args(argc, argv, &o, err, sizeof err)) {
        fprintf(stderr, "ggemm: %s\n", err);
        return GG_EXIT_USAGE;
    }
    if (o.help) {
        gg_usage_command(stdout, o.command);
        return GG_EXIT_OK;
    }
    switch (o.command) {
    case GG_CMD_PROBLEM: return gg_cmd_problem(&o);
    case GG_CMD_LIST: return gg_cmd_list(&o);
    case GG_CMD_RUN: return gg_cmd_run(&o);
    case GG_CMD_TRACE: return gg_cmd_trace(&o);
    case GG_CMD_SWEEP: return gg_cmd_sweep(&o);
    case GG_CMD_CASES: return gg_cmd_cases(&o);
    case GG_CMD_CEILINGS: return gg_cmd_ceilings(&o);
    case GG_CMD_CALIBRATE: return gg_cmd_calibrate(&o);
    case GG_CMD_DEVICE: return gg_cmd_device(&o);
    case GG_CMD_VERSION: return gg_cmd_version(&o);
    case GG_CMD_FUZZ: return gg_cmd_fuzz(&o);
    case GG_CMD_GRADE: return gg_cmd_grade(&o);
    case GG_CMD_MOE: return gg_cmd_moe(&o);
    case GG_CMD_TILES: return gg_cmd_tiles(&o);
    case GG_CMD_HELP: gg_usage(stdout); return GG_EXIT_OK;
    }
    return GG_EXIT_USAGE;
}
