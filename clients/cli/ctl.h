/* SPDX-License-Identifier: MIT */
/* What contactctl's command modules share: the exit statuses `contactctl --help` and
 * contactctl(1) document. */
#ifndef CONTACTD_CLI_CTL_H
#define CONTACTD_CLI_CTL_H

enum {
    CTL_EXIT_OK = 0,     /* success */
    CTL_EXIT_FAIL = 1,   /* a solve or status failure; replay: a difference */
    CTL_EXIT_USAGE = 2,  /* bad command line */
    CTL_EXIT_DATA = 3,   /* a file that cannot be read or holds bad data */
    CTL_EXIT_DAEMON = 4, /* the daemon could not be reached, refused, or sent an Error */
};

#endif /* CONTACTD_CLI_CTL_H */
