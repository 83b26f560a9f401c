/* SPDX-License-Identifier: MIT */
/* The table of solvers (solvers.h says how to add one) and what reads only the table: which
 * solvers this build has, and which a session may run. Their names are the wire's
 * (wire/names.c). */
#include "solver/solvers.h"

#include "solver/dantzig.h"
#include "solver/lemke_contact.h"
#include "solver/lemke_structural.h"
#include "solver/ncp.h"
#include "solver/sap.h"

/* Indexed by cs_solver. The pivoting solvers solve Coulomb's law on the d-sided pyramid (Lloyd
 * 2005 eq. 6); SAP its regularized cone (Castro et al. 2022); ncp the exact cone (Todorov
 * 2010). Joints reach a solver through the model's reduced Delassus form (joints.h): every
 * solver on that form takes them, and both structural Lemke variants switch to it for a scene
 * with joints (lemke_structural.h). SAP works on the Jacobian and the bodies' own mass matrix:
 * it takes the joints as near-rigid holonomic rows of its own convex problem (sap.h). */
static const cs__solver_desc table[] = {
    [CS_SOLVER_DEFAULT] = {.solver = CS_SOLVER_DEFAULT},
    [CS_SOLVER_DANTZIG] = {.solver = CS_SOLVER_DANTZIG,
                           .friction = CS__FRICTION_PYRAMID, .joints = true, .delassus_rows = 3,
                           .warm = CS__WARM_NONE, .size = cs_dantzig_size,
                           .run = cs__dantzig_run},
    [CS_SOLVER_LEMKE] = {.solver = CS_SOLVER_LEMKE,
                         .friction = CS__FRICTION_PYRAMID, .joints = true, .warm = CS__WARM_BASIS,
                         .size = cs__lemke_structural_run_size,
                         .run = cs__lemke_structural_run_reduced},
    [CS_SOLVER_LEMKE_STRUCTURAL] = {.solver = CS_SOLVER_LEMKE_STRUCTURAL,
                                    .friction = CS__FRICTION_PYRAMID,
                                    .joints = true, .warm = CS__WARM_BASIS,
                                    .size = cs__lemke_structural_run_size,
                                    .run = cs__lemke_structural_run},
    [CS_SOLVER_LEMKE_STANDARD] = {.solver = CS_SOLVER_LEMKE_STANDARD,
                                  .friction = CS__FRICTION_PYRAMID, .joints = true,
                                  .delassus_rows = 3,
                                  .warm = CS__WARM_NONE, .size = cs_lemke_standard_size,
                                  .run = cs__lemke_standard_run},
    [CS_SOLVER_SAP] = {.solver = CS_SOLVER_SAP, .friction = CS__FRICTION_CONE,
                       .regularized = true, .iterates = true, .joints = true,
                       .joint_rows = true, .warm = CS__WARM_ANSWER,
                       .size = cs_sap_size, .run = cs__sap_run, .warm_up = cs__sap_warm_up},
    [CS_SOLVER_NCP] = {.solver = CS_SOLVER_NCP, .friction = CS__FRICTION_CONE,
                       .iterates = true, .joints = true, .delassus_rows = 3,
                       .warm = CS__WARM_ANSWER,
                       .size = cs__ncp_run_size, .run = cs__ncp_run},
};

// A value without a row would read as "not in this build"; one beyond the enum could never run.
_Static_assert(sizeof table / sizeof table[0] == CS_SOLVER_COUNT,
               "one row of the solver table per cs_solver value");

const cs__solver_desc *cs__solver_row(cs_solver s) {
    return (int)s >= 0 && (int)s < CS_SOLVER_COUNT ? &table[s] : NULL;
}

bool cs_solver_is_available(cs_solver s) {
    const cs__solver_desc *d = cs__solver_row(s);
    return d && d->run;
}

bool cs_solver_takes_joints(cs_solver s) {
    const cs__solver_desc *d = cs__solver_row(s);
    return d && d->run && d->joints;
}

unsigned cs_solver_mask(bool available_only) {
    unsigned mask = 0;
    for (int s = CS_SOLVER_DEFAULT + 1; s < CS_SOLVER_COUNT; s++)
        mask |= table[s].run ? 1u << s : 0;
    return available_only ? mask : CS_SOLVER_NAMED_MASK;
}

unsigned cs_limits_mask(const cs_limits *lim) {
    const unsigned available = cs_solver_mask(true);
    return lim->solvers == 0 ? available : lim->solvers & available;
}

bool cs_limits_allow(const cs_limits *lim, cs_solver s) {
    return (int)s >= 0 && (int)s < CS_SOLVER_COUNT && (cs_limits_mask(lim) & (1u << s)) != 0;
}
