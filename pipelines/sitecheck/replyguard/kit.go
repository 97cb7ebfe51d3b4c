package replyguard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Fixed fallback replies. They name nobody, confirm nothing, offer nothing
// and hold no number or contact detail, so they pass Check for any business
// (unless the review itself is not English).
const (
	safeReplyGeneral    = "Thank you for your feedback. We take every comment seriously and would welcome the chance to talk; please contact us directly."
	safeReplyHealthcare = "Thank you for your feedback. We take every comment seriously. To protect everyone's privacy, we never discuss details in public; please contact our office directly so we can talk."
)

// SafeReply is the fixed reply the route posts when no draft passes.
// businessName is accepted for the route's convenience but deliberately not
// used: text taken from the business could carry a placeholder or a name.
func SafeReply(businessName string, healthcare bool) string {
	_ = businessName
	if healthcare {
		return safeReplyHealthcare
	}
	return safeReplyGeneral
}

// KitFunctions maps the kit's function names to adapters that take the
// function's JSON input and return its output.
func KitFunctions() map[string]func(json.RawMessage) (any, error) {
	return map[string]func(json.RawMessage) (any, error){
		"checkReply":           kitCheckReply,
		"isHealthcareBusiness": kitIsHealthcareBusiness,
	}
}

type checkReplyArgs struct {
	Review       *string         `json:"review"`
	Rating       json.RawMessage `json:"rating"`
	BusinessName *string         `json:"business_name"`
	BusinessType *string         `json:"business_type"`
	Reply        *string         `json:"reply"`
}

type isHealthcareArgs struct {
	BusinessName *string `json:"business_name"`
	BusinessType *string `json:"business_type"`
}

func kitCheckReply(raw json.RawMessage) (any, error) {
	in, err := DecodeInput(raw)
	if err != nil {
		return nil, err
	}
	return Check(in), nil
}

// DecodeInput reads checkReply's arguments ({review, rating,
// business_name, business_type?, reply}) with the kits' rules and words:
// unknown fields, wrong types, a missing field or a rating outside 1..5
// are errors that start "checkReply: " and say what to send.
func DecodeInput(raw json.RawMessage) (Input, error) {
	const fn = "checkReply"
	var a checkReplyArgs
	if err := decodeStrict(fn, raw, &a, "review, rating, business_name, business_type, reply"); err != nil {
		return Input{}, err
	}
	if a.Review == nil {
		return Input{}, fmt.Errorf(`%s: "review" is required: the review text as a string ("" for a rating-only review)`, fn)
	}
	rating, err := parseRating(fn, a.Rating)
	if err != nil {
		return Input{}, err
	}
	if a.BusinessName == nil || strings.TrimSpace(*a.BusinessName) == "" {
		return Input{}, fmt.Errorf(`%s: "business_name" is required: the business's name as a non-empty string`, fn)
	}
	if a.Reply == nil {
		return Input{}, fmt.Errorf(`%s: "reply" is required: the reply text as a string`, fn)
	}
	in := Input{Review: *a.Review, Rating: rating, BusinessName: *a.BusinessName, Reply: *a.Reply}
	if a.BusinessType != nil {
		in.BusinessType = *a.BusinessType
	}
	return in, nil
}

func kitIsHealthcareBusiness(raw json.RawMessage) (any, error) {
	const fn = "isHealthcareBusiness"
	var a isHealthcareArgs
	if err := decodeStrict(fn, raw, &a, "business_name, business_type"); err != nil {
		return nil, err
	}
	if a.BusinessName == nil {
		return nil, fmt.Errorf(`%s: "business_name" is required: the business's name as a string`, fn)
	}
	bt := ""
	if a.BusinessType != nil {
		bt = *a.BusinessType
	}
	return IsHealthcare(*a.BusinessName, bt), nil
}

// decodeStrict decodes one JSON object, refusing unknown fields, wrong
// types and trailing data with messages that say what to fix.
func decodeStrict(fn string, raw json.RawMessage, v any, allowed string) error {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return fmt.Errorf("%s: the input must be a JSON object with the fields %s", fn, allowed)
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te):
			return fmt.Errorf("%s: %q must be a %s, not a JSON %s", fn, te.Field, wantType(te.Field), te.Value)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			return fmt.Errorf("%s: unknown field %s; the allowed fields are %s", fn, strings.TrimPrefix(err.Error(), "json: unknown field "), allowed)
		default:
			return fmt.Errorf("%s: the input is not valid JSON: %v", fn, err)
		}
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%s: unexpected data after the JSON object", fn)
	}
	return nil
}

func wantType(field string) string {
	if field == "rating" {
		return "whole number from 1 to 5"
	}
	return "string"
}

// parseRating accepts a JSON number whose value is a whole number from 1 to
// 5 (5 and 5.0 alike, as JavaScript cannot tell them apart).
func parseRating(fn string, raw json.RawMessage) (int, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return 0, fmt.Errorf(`%s: "rating" is required: the review's star rating, a whole number from 1 to 5`, fn)
	}
	if t[0] != '-' && (t[0] < '0' || t[0] > '9') {
		return 0, fmt.Errorf(`%s: "rating" must be a whole number from 1 to 5, not %s`, fn, t)
	}
	f, err := strconv.ParseFloat(string(t), 64)
	if err != nil || f != math.Trunc(f) || f < 1 || f > 5 {
		return 0, fmt.Errorf(`%s: "rating" must be a whole number from 1 to 5, not %s`, fn, t)
	}
	return int(f), nil
}
