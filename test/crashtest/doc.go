// Package crashtest holds boxd's crash-safety tests (kill -9); it has no
// code of its own.
//
// TestKill9Server builds the real boxd binary, serves it on a state
// directory and kills it with SIGKILL at random points while clients write
// through every persisting route: developer keys (create, revoke), usage
// (every key-authenticated request, the chat's tokens), model-call
// receipts, persisted retrieval indexes (retrieval.persist), studio
// reports, domain challenges and, where chromium is installed, fill runs.
// After each kill it checks, before and after restarting on the same
// directory: SQLite's integrity_check on every database, every write a
// client saw acknowledged (2xx) present and whole, nothing present that
// was never sent, and the signing key unchanged.
//
// TestKill9Store does the same one level lower, in a child process that
// writes through package store directly: the writes no route makes from
// outside (a domain marked verified, the kept runs, reports and pairs
// tables), at a higher rate.
//
// BOXD_CRASH_ROUNDS sets the kills of each test (default 50);
// BOXD_CRASH_SEED replays a run's random choices (each run logs its seed).
package crashtest
