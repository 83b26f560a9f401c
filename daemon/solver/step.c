/* SPDX-License-Identifier: MIT */
/* One step of a session: model, solver, certificate, labels, forces, and the fallback rule.
 *
 * An answer goes out as the solver's own (CS_ANSWER_SOLVER) only when it passes the certificate,
 * and only such answers are stored in the warm start. Otherwise (ray, pivot cap, a failed
 * certificate, or the deadline) the answer is carried, labelled: the last certified impulses of
 * contacts whose ids persist and zero for new ones, with the velocities they imply and their own,
 * honest, certificate (CS_ANSWER_LAST_CERTIFIED). When no contact of the scene has a certified
 * impulse to carry, there is no answer: zero impulses, CS_ANSWER_NONE, and a negative status
 * (CS_NOANSWER), so nobody mistakes the zeros for forces. A solver whose iterates are answers
 * (solvers.h `iterates`: SAP, ncp) is the exception at the deadline once it has an iterate: its
 * best iterate goes out, labelled CS_DEADLINE and CS_ANSWER_ITERATE, with its own certificate,
 * and is never stored as certified.
 *
 * Joints (joints.h) are reduced onto the contacts before the solver runs; whatever contact
 * impulses go out, every joint's impulse follows from them by the articulated solve, so the
 * joints hold in a carried answer too. A solver that takes the joints as rows of its own
 * problem (SAP, solvers.h joint_rows) gets them unreduced and returns their impulses: its own
 * answers (certified, or its iterate) emit those; a carried answer the rigid joints' as above.
 *
 * The deadline is the step's, not only the solver's: what follows the solver (the certificate,
 * or the fallback's carry and certificate, then the forces) is O(contacts), 8-15 us at a
 * session's 256 contacts, so a solver stopped at opt's deadline made the step return that late.
 * The solver gets opt's deadline less what the session's last step spent after its solver,
 * measured with the caller's clock and kept in the warm start (less at most half of what the
 * step has left at its start). The step's certificate is never cut: an answer is the solver's
 * only when its whole certificate ran, and a cut certificate would send the step to the
 * fallback, which needs a certificate of its own (as long again). A solver that checks its own
 * answer (lemke's) does so inside its budget, and stops there, labelled, like its pivots. */
#include "solver/step.h"

#include <math.h>
#include <string.h>

#include "solver/articulated.h"
#include "solver/certify.h"
#include "solver/contact.h"
#include "solver/deadline.h"
#include "solver/joints.h"
#include "solver/model.h"
#include "solver/solvers.h"
#include "solver/warmstart.h"
#include "solver/workspace.h"

size_t cs_step_size(const cs_limits *lim) {
    return cs__ws_bytes(3 * (size_t)lim->max_contacts * sizeof(double)) +
           cs__ws_bytes(6 * (size_t)lim->max_joints * sizeof(double)) +
           2 * cs__ws_bytes(6 * (size_t)lim->max_bodies * sizeof(double)) +
           cs__ws_bytes((size_t)lim->max_contacts * sizeof(uint32_t));
}

/* The previous tick's Lemke basis words of s's contacts in scene order (0 for new contacts);
 * NULL when none of them is known. */
static const uint32_t *warm_basis(const cs_warmstart *warm, const cs_scene *s, int d,
                                  uint32_t *words) {
    bool any = false;
    for (int i = 0; i < s->nc; i++)
        any = cs__warm_basis(warm, s->contacts[i].id, d, &words[i]) || any;
    return any ? words : NULL;
}

/* Runs solver d on m with what its row says it starts from (solvers.h). basis: [nc] out, the
 * solver's basis words (CS__WARM_BASIS), and the previous tick's in: the solver reads them before
 * writing its own. lj [joint rows], v [6 nb], state [nc], cert: out as cs__solve_out says;
 * *certified is set when the solver checked its own answer (the step need not repeat it). */
static cs_status run_solver(cs_workspace *ws, const cs__solver_desc *d, const cs_model *m,
                            const cs_scene *s, const cs_options *opt, const cs_warmstart *warm,
                            double *lambda, double *lj, uint32_t *basis, double *v,
                            uint8_t *state, cs_certificate *cert, bool *certified,
                            bool *no_iterate, cs_stats *st) {
    const cs__solve_in in = {
        .m = m,
        .s = s,
        .opt = opt,
        .warm = d->warm == CS__WARM_ANSWER ? warm : NULL,
        .basis = d->warm == CS__WARM_BASIS && warm ? warm_basis(warm, s, m->nd, basis) : NULL,
    };
    cs__solve_out out = {.lambda = lambda, .basis = basis, .v = v, .state = state,
                         .lambda_j = d->joint_rows ? lj : NULL, .cert = cert,
                         .certified = false, .no_iterate = false, .st = st};
    const cs_status ret = d->run(ws, &in, &out);
    *certified = out.certified;
    *no_iterate = out.no_iterate;
    return ret;
}

/* Impulses, world forces and velocities of an answer into out; with joints, every joint's force
 * and torque: from the joint impulses lj [joint rows] when lj_given (a solver's own joint rows),
 * else from the rigid joints under the contact impulses (lj then scratch, as is [6 nb]). */
static void emit(const cs_model *m, const double *lambda, const double *v, double *lj,
                 bool lj_given, double *scratch, cs_result *out) {
    for (int i = 0; i < m->nc; i++) {
        const double *F = m->frame + 9 * i, *l = lambda + 3 * i;
        for (int k = 0; k < 3; k++) {
            out->impulse[3 * i + k] = l[k];
            out->force[3 * i + k] = (l[0] * F[k] + l[1] * F[3 + k] + l[2] * F[6 + k]) / m->dt;
        }
    }
    memcpy(out->v, v, 6 * (size_t)m->nb * sizeof(double));
    if (!m->jt)
        return;
    if (!lj_given)
        cs__joints_velocity(m->jt, lambda, scratch, lj);
    for (int j = 0; j < m->jt->art->nj; j++)
        cs_articulated_joint_wrench(m->jt->art, j, lj, out->joint_force + 3 * j,
                                    out->joint_torque + 3 * j);
}

/* The solver's deadline: opt's, less the session's reserve (what its last step did after the
 * solver), so that the certificate, fallback and forces that follow the solver end by opt's
 * deadline instead of starting there; but less at most half of what the step had left at `now`
 * (its start), so a reserve that a host stall inflated costs the solver half its time, never all
 * of it. 0 (none) without a deadline or a clock; never 0 with one. */
static int64_t solver_deadline(const cs_warmstart *warm, const cs_options *opt, int64_t now) {
    if (!opt->clock_ns || !opt->deadline_ns || opt->deadline_ns <= now)
        return opt->deadline_ns;
    // deadline > now: their difference fits unsigned, and deadline - keep lies between them.
    const int64_t half = (int64_t)(((uint64_t)opt->deadline_ns - (uint64_t)now) / 2);
    const int64_t reserve = cs__warm_reserve(warm), keep = reserve < half ? reserve : half;
    const int64_t d = opt->deadline_ns - keep;
    return d != 0 ? d : -1;
}

/* The reserve after a step that took `took` after its solver: that, or twice the reserve before
 * when it was longer, so one tail stretched by a host stall does not take the next step's budget
 * while a scene that grew gets its reserve within a few steps. */
static int64_t next_reserve(int64_t before, int64_t took) {
    if (took < 0)
        return before;
    // took - before: no overflow, both >= 0.
    return before > 0 && took - before > before ? 2 * before : took;
}

/* True when every number out sends is finite. */
static bool finite_answer(const cs_result *out) {
    const size_t nc = 3 * (size_t)out->nc, nj = 3 * (size_t)out->nj, nb = 6 * (size_t)out->nb;
    double sum = 0;
    // 0 x is 0 for a finite x and NaN for an infinite or NaN one: one comparison tests them all.
    for (size_t k = 0; k < nc; k++)
        sum += 0 * out->impulse[k] + 0 * out->force[k];
    for (size_t k = 0; k < nj; k++)
        sum += 0 * out->joint_force[k] + 0 * out->joint_torque[k];
    for (size_t k = 0; k < nb; k++)
        sum += 0 * out->v[k];
    return sum == 0;
}

/* An answer no one can use: zero impulses, forces and velocities. */
static cs_status fail_step(cs_result *out, cs_status st) {
    out->status = out->primary = st;
    memset(out->impulse, 0, 3 * (size_t)out->nc * sizeof(double));
    memset(out->force, 0, 3 * (size_t)out->nc * sizeof(double));
    for (int i = 0; i < out->nc; i++)
        out->state[i] = CS_STATE_SEPARATE;
    memset(out->v, 0, 6 * (size_t)out->nb * sizeof(double));
    memset(out->joint_force, 0, 3 * (size_t)out->nj * sizeof(double));
    memset(out->joint_torque, 0, 3 * (size_t)out->nj * sizeof(double));
    return st;
}

cs_status cs_step(cs_workspace *ws, const cs_scene *s, const cs_options *opt, cs_warmstart *warm,
                  cs_result *out) {
    const cs_limits *lim = cs__ws_limits(ws);
    out->seq = s->seq;
    out->solver = opt->solver;
    out->answer = CS_ANSWER_NONE;
    out->carried = 0;
    out->stats = (cs_stats){0};
    out->cert = (cs_certificate){0};
    if (s->nb > lim->max_bodies || s->nc > lim->max_contacts || s->nj > lim->max_joints ||
        s->nb < 0 || s->nc < 0 || s->nj < 0) {
        // The result arrays are sized for lim: report nothing rather than overrun them.
        out->nb = out->nc = out->nj = 0;
        return out->status = out->primary = CS_ENOSPACE;
    }
    out->nb = s->nb;
    out->nc = s->nc;
    out->nj = s->nj;
    for (int i = 0; i < s->nc; i++)
        out->contact_id[i] = s->contacts[i].id;
    for (int b = 0; b < s->nb; b++)
        out->body_id[b] = s->bodies[b].id;
    for (int j = 0; j < s->nj; j++)
        out->joint_id[j] = s->joints[j].id;
    // The workspace holds scratch for the declared solvers only: refuse any other rather than
    // run out of it (an unresolved CS_SOLVER_DEFAULT is the caller's error).
    if (!cs_limits_allow(lim, opt->solver))
        return fail_step(out, cs_solver_is_available(opt->solver) ? CS_ENOSPACE : CS_EINPUT);
    // Validation refuses joints for a solver without joint rows; one that gets here anyway would
    // silently drop them.
    if (s->nj > 0 && !cs_solver_takes_joints(opt->solver))
        return fail_step(out, CS_EINPUT);
    const cs__solver_desc *d = cs__solver_row(opt->solver);
    // The certificate judges a solver on the friction set it solves (Coulomb's law on the
    // d-sided pyramid for the pivoting solvers) and ignores friction for a frictionless one.
    const bool frictional = d->friction != CS__FRICTION_NONE;
    const bool pyramid = d->friction == CS__FRICTION_PYRAMID;

    const size_t mark = cs__ws_mark(ws);
    cs__ws_reset_peak(ws);
    cs_model m;
    cs_status st = cs_model_build(&m, ws, s);
    // With a warm start the step keeps time for what follows its solver (solver_deadline), read
    // from the step's start.
    const bool timed = warm && opt->clock_ns && opt->deadline_ns;
    cs_options sopt = *opt;
    sopt.deadline_ns = solver_deadline(warm, opt, timed ? opt->clock_ns() : 0);
    // The joints' reduction is part of the model. Cut short by the deadline it still holds the
    // joints, and the deadline check below takes the fallback.
    cs__meter meter = cs__meter_start(&sopt);
    if (st == CS_CONVERGED)
        st = d->joint_rows ? cs__joints_build_rows(&m, ws, s, warm)
                           : cs__joints_build(&m, ws, s, warm, &meter);
    if (st == CS_DEADLINE && m.jt)
        st = CS_CONVERGED;
    double *lambda = cs__ws_alloc(ws, 3 * (size_t)s->nc * sizeof(double));
    double *lj = cs__ws_alloc(ws, 6 * (size_t)s->nj * sizeof(double));
    double *v = cs__ws_alloc(ws, 6 * (size_t)s->nb * sizeof(double));
    double *scratch = cs__ws_alloc(ws, 6 * (size_t)s->nb * sizeof(double));
    uint32_t *basis = cs__ws_zalloc(ws, (size_t)s->nc * sizeof(uint32_t));
    if (st == CS_CONVERGED && (!lambda || !lj || !v || !scratch || !basis))
        st = CS_ENOSPACE;
    if (st != CS_CONVERGED) {
        cs__ws_release(ws, mark);
        return fail_step(out, st);
    }

    // A tick that reaches this session already late (or with less left than the reserve)
    // answers with the fallback at once, even for a problem that would need no pivot, and even
    // with a solver whose iterates are answers: setting up its first one costs O(contacts) that
    // the deadline no longer has.
    bool certified = false, no_iterate = false;
    // When the solver returned, or was skipped: what follows is measured from here.
    const int64_t t0 = opt->clock_ns ? opt->clock_ns() : 0;
    int64_t t1 = t0;
    if (sopt.deadline_ns && opt->clock_ns && t0 >= sopt.deadline_ns) {
        st = CS_DEADLINE;
        no_iterate = true;
    } else {
        st = run_solver(ws, d, &m, s, &sopt, warm, lambda, lj, basis, v, out->state, &out->cert,
                        &certified, &no_iterate, &out->stats);
        t1 = opt->clock_ns ? opt->clock_ns() : 0;
        out->stats.solve_ns = t1 - t0;
    }
    out->primary = st;
    const bool iterate = d->iterates && !no_iterate;
    // The solver's own joint impulses, for an answer of its own (a carried one's are rigid).
    const bool own_lj = d->joint_rows && m.jt && st >= 0 && !no_iterate;
    if (d->regularized && st >= 0 && !no_iterate) {
        // A regularized answer (SAP's) is judged on what it solves (certify.h); at the deadline
        // its iterate is the answer, labelled, with the certificate it has.
        const double *lj_own = own_lj ? lj : NULL;
        cs_certify_joints(ws, &m, lambda, lj_own, v, pyramid, &out->cert, NULL);
        if (st != CS_DEADLINE && !cs_certificate_is_ok_regularized(ws, &m, lambda, lj_own, v,
                                                                   &out->cert, opt->cert_tol))
            st = out->primary = CS_UNCERTIFIED;
    } else if (st == CS_CONVERGED || st == CS_MAXITER || (iterate && st == CS_DEADLINE)) {
        // An iterate at the deadline gets its certificate too: what it is, not a judgment.
        if (!certified) {
            cs_model_velocity(&m, lambda, v, scratch);
            cs_certify(ws, &m, lambda, v, pyramid, &out->cert, out->state);
        }
        if (st != CS_DEADLINE && !cs_certificate_is_ok(&out->cert, opt->cert_tol, frictional))
            st = out->primary = CS_UNCERTIFIED;
    }
    if (st == CS_CONVERGED || st == CS_MAXITER) {
        // Certified: the answer goes out and is what a later failed step carries.
        out->status = st;
        out->answer = CS_ANSWER_SOLVER;
        emit(&m, lambda, v, lj, own_lj, scratch, out);
        if (warm) {
            cs__warm_store(warm, out);
            if (d->warm == CS__WARM_BASIS)
                cs__warm_store_basis(warm, basis, m.nd);
        }
    } else if (iterate && st == CS_DEADLINE) {
        // The iterate: usable, labelled, never stored as certified.
        out->status = CS_DEADLINE;
        out->answer = CS_ANSWER_ITERATE;
        emit(&m, lambda, v, lj, own_lj, scratch, out);
    } else {
        // Carry the last certified impulses by contact id, zero for those it does not know; the
        // joints react to them (emit), so they hold whatever was carried.
        int carried = 0;
        for (int i = 0; i < s->nc; i++)
            carried += cs__warm_impulse(warm, s->contacts[i].id, lambda + 3 * i);
        cs_model_velocity(&m, lambda, v, scratch);
        cs_certify(ws, &m, lambda, v, pyramid, &out->cert, out->state);
        out->carried = carried;
        out->answer = carried > 0 ? CS_ANSWER_LAST_CERTIFIED : CS_ANSWER_NONE;
        // Zero contact impulses that no certified answer backs are no answer (a scene without
        // contacts needs none: its joints' impulses are exact).
        out->status = carried == 0 && s->nc > 0 ? CS_NOANSWER
                      : st == CS_DEADLINE      ? CS_DEADLINE
                                               : CS_FALLBACK;
        emit(&m, lambda, v, lj, false, scratch, out);
    }
    // Whatever the path, nothing non-finite leaves: such an answer is no answer.
    if (!finite_answer(out)) {
        fail_step(out, CS_NOANSWER);
        out->primary = st;
        out->answer = CS_ANSWER_NONE;
        out->carried = 0;
    }
    // What this step did after its solver is what the next keeps from its solver's budget (a
    // skipped solver's fallback too: a reserve that outgrew the budget comes down again).
    if (timed)
        cs__warm_set_reserve(warm, next_reserve(cs__warm_reserve(warm), opt->clock_ns() - t1));
    out->stats.peak_bytes = cs__ws_peak(ws);
    cs__ws_release(ws, mark);
    return out->status;
}
