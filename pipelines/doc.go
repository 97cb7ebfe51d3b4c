// Package pipelines is the parent of boxd's route families. Each family is a
// sub-package (live, replay, chat, audit, walkthrough, sop, a11y, fill, oral,
// staging, docreader, sitecheck, retrieval, migration, studio) that takes a
// typed request from web, calls the engines and engine/attest, and streams
// typed events back. Pipelines never import web; each is testable without
// HTTP.
package pipelines
