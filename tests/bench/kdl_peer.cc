// SPDX-License-Identifier: MIT
// KDL's Vereshchagin and RNE solvers on a hinge chain, behind kdl_peer.h's C interface.
#include "kdl_peer.h"

#include <new>

#include <kdl/chain.hpp>
#include <kdl/chainidsolver_recursive_newton_euler.hpp>
#include <kdl/chainhdsolver_vereshchagin.hpp>

struct kdl_peer {
    KDL::Chain chain;
    KDL::JntArray q, qd, qdd, tau, ff, cons;
    // Open chain: no end-effector constraint (6 x 0); loop: the tip's linear acceleration held
    // at zero by three unit forces (6 x 3), the tip tied to the world by a ball joint.
    KDL::Jacobian alfa[2];
    KDL::JntArray beta[2];
    KDL::Wrenches fext;
    KDL::ChainHdSolver_Vereshchagin *hd[2] = {nullptr, nullptr};
    KDL::ChainIdSolver_RNE *rne = nullptr;
    ~kdl_peer() {
        delete hd[0];
        delete hd[1];
        delete rne;
    }
};

bool kdl_peer_is_built(void) {
    return true;
}

kdl_peer *kdl_peer_new(int n, const double *mass, const double *com, const double *inertia,
                       const double *axis, const double *tip, const double g[3]) {
    try {
        kdl_peer *k = new kdl_peer;
        for (int i = 0; i < n; i++) {
            // The segment's root frame sits at its joint; KDL takes its inertia about the tip
            // frame's origin, which RigidBodyInertia shifts to from the one about the COM.
            const double *I = inertia + 9 * i, *t = tip + 3 * i, *c = com + 3 * i;
            const KDL::Joint joint(KDL::Vector::Zero(),
                                   KDL::Vector(axis[3 * i], axis[3 * i + 1], axis[3 * i + 2]),
                                   KDL::Joint::RotAxis);
            const KDL::RigidBodyInertia rbi(
                mass[i], KDL::Vector(c[0] - t[0], c[1] - t[1], c[2] - t[2]),
                KDL::RotationalInertia(I[0], I[4], I[8], I[1], I[2], I[5]));
            k->chain.addSegment(KDL::Segment(joint, KDL::Frame(KDL::Vector(t[0], t[1], t[2])),
                                             rbi));
        }
        const unsigned nj = k->chain.getNrOfJoints();
        k->q.resize(nj), k->qd.resize(nj), k->qdd.resize(nj), k->tau.resize(nj);
        k->ff.resize(nj), k->cons.resize(nj);
        k->fext.assign(k->chain.getNrOfSegments(), KDL::Wrench::Zero());
        // Vereshchagin takes the base's acceleration (minus gravity), RNE gravity itself.
        const KDL::Twist root(KDL::Vector(-g[0], -g[1], -g[2]), KDL::Vector::Zero());
        for (unsigned l = 0; l < 2; l++) {
            k->alfa[l].resize(3 * l);
            k->alfa[l].data.setZero();
            for (unsigned c = 0; c < 3 * l; c++)
                k->alfa[l](c, c) = 1;
            // KDL's accelerations include the base's (-g): a tip at rest in the world moves at
            // -g in them.
            k->beta[l].resize(3 * l);
            for (unsigned c = 0; c < 3 * l; c++)
                k->beta[l](c) = -g[c];
            k->hd[l] = new KDL::ChainHdSolver_Vereshchagin(k->chain, root, 3 * l);
        }
        k->rne = new KDL::ChainIdSolver_RNE(k->chain, KDL::Vector(g[0], g[1], g[2]));
        return k;
    } catch (const std::bad_alloc &) {
        return nullptr;
    }
}

void kdl_peer_free(kdl_peer *k) {
    delete k;
}

void kdl_peer_load(kdl_peer *k, const double *q, const double *qd) {
    for (unsigned i = 0; i < k->q.rows(); i++)
        k->q(i) = q[i], k->qd(i) = qd[i];
}

int kdl_peer_forward(kdl_peer *k, bool loop, double *qdd) {
    const int r = k->hd[loop]->CartToJnt(k->q, k->qd, k->qdd, k->alfa[loop], k->beta[loop],
                                         k->fext, k->ff, k->cons);
    for (unsigned i = 0; i < k->qdd.rows(); i++)
        qdd[i] = k->qdd(i);
    return r;
}

int kdl_peer_inverse(kdl_peer *k, const double *qdd, double *tau) {
    for (unsigned i = 0; i < k->qdd.rows(); i++)
        k->qdd(i) = qdd[i];
    const int r = k->rne->CartToJnt(k->q, k->qd, k->qdd, k->fext, k->tau);
    for (unsigned i = 0; i < k->tau.rows(); i++)
        tau[i] = k->tau(i);
    return r;
}
