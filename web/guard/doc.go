// Package guard holds the HTTP guards against hostile or broken clients,
// each a standalone middleware constructor taking its options (the shape
// of coder's httpmw): body deadlines and body memory, connection limits,
// JSON for net/http's canned answers and handlers' plain-text errors,
// strict request targets, allowed hosts and origins, and the OpenAI SDK
// error shape. None knows a route family. What the box bounds (README
// "Security bounds", docs/decisions.md "Hostile clients"):
//
//   - a request body must arrive within limits.body_read_floor_s plus its
//     size at limits.body_read_min_bytes_per_s (BodyDeadlines; 408);
//   - the bytes of request bodies held at once, in all, within
//     limits.body_memory_mb (BodyDeadlines; 503 busy);
//   - slots (busy limits, one run per demo token, live and model-call
//     slots) are taken only once a body has arrived (web/api admission);
//   - chat completions demo tokens run at once, together
//     (limits.demo_model_calls, web/api; 503 busy);
//   - connections per client network and in all (LimitListener; 429, 503);
//   - verifications at once (web/api Gate; 503 busy);
//   - wrong admin secrets per client network per minute (web/api; 429).
package guard
