package platform

// KeyCreated is the response of POST /v1/keys: the only time the key is
// shown.
type KeyCreated struct {
	Key     string     `json:"key"`
	KeyID   string     `json:"key_id"`
	Created int64      `json:"created"`
	Label   string     `json:"label"`
	Plan    string     `json:"plan"`
	Limits  LimitsView `json:"limits"`
}
