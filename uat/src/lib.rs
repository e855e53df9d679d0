//! The UAT sign-off tier: journeys as cells, a strict runner whose verdict can
//! never pass through skips, council grading of redacted evidence against the
//! pinned rubric, arbitration, and the pinned sign-off definition checked by the
//! `studyloop-uat` command, plus retention of the durable evidence bundles.

pub mod strict;
