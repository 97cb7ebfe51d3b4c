package live

import "boxd/engine/asr/stream"

// Frame limits. A binary frame of up to stream.MaxFrameBytes (2 s of audio)
// is audio; a larger message up to MessageCap is read, dropped and
// answered with an error event (the session goes on, like an odd-length
// frame); above MessageCap the socket is closed 1009 after an error
// event, since reading on would let one message take any memory or time.
const (
	FrameLimit = stream.MaxFrameBytes
	MessageCap = 1 << 20
)
