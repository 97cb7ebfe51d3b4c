package live

// ErrAnswerCut lets the external tests hand a lane a cut answer.
var ErrAnswerCut = errAnswerCut
