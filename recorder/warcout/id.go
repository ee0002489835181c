package warcout

import "github.com/google/uuid"

// newID is a new record id, a UUID URN in angle brackets.
func newID() string { return "<" + uuid.New().URN() + ">" }
