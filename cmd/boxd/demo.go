package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"boxd/configs"
	"boxd/pipelines/live/scripts"
	"boxd/pipelines/replay"
)

// newDemo holds the demo-script commands. `boxd demo audio` synthesises the
// scripts' audio into the state directory; `boxd demo record` replays
// scripts through the running daemon, which keeps each clean replay as the
// script's recording (GET /demo/recordings; docs/decisions.md, "Demo
// scripts and replay").
func newDemo() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Demo scripts: synthesise their audio, record replays for /demo/recordings",
	}
	configs.RegisterFileFlags(cmd.PersistentFlags())
	cmd.AddCommand(newDemoAudio(), newDemoRecord())
	return cmd
}

// pickScripts returns the scripts named (all when none), refusing unknown
// ids.
func pickScripts(ids []string) ([]scripts.Script, error) {
	if len(ids) == 0 {
		return scripts.All(), nil
	}
	var out []scripts.Script
	for _, id := range ids {
		s, ok := scripts.Lookup(id)
		if !ok {
			return nil, configError{fmt.Errorf("no script %q; the scripts are %s", id, strings.Join(scripts.IDs(), ", "))}
		}
		out = append(out, s)
	}
	return out, nil
}

func newDemoAudio() *cobra.Command {
	return &cobra.Command{
		Use:   "audio [SCRIPT_ID...]",
		Short: "Synthesise the demo scripts' audio (espeak-ng) into <state_dir>/demo-audio, or check it is cached",
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := configs.Load(cmd.Flags())
			if err != nil {
				return configError{err}
			}
			list, err := pickScripts(args)
			if err != nil {
				return err
			}
			dir := scripts.CacheDir(cfg.StateDir)
			out := cmd.OutOrStdout()
			for _, s := range list {
				pcm, lines, err := scripts.Audio(cmd.Context(), dir, s.ID)
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "%-28s %6.1f s  %2d lines\n", s.ID, float64(len(pcm))/(2*scripts.SampleRate), len(lines))
			}
			fmt.Fprintln(out, "cached in", dir)
			return nil
		},
	}
}

func newDemoRecord() *cobra.Command {
	var (
		url, key string
		speed    float64
		timeout  time.Duration
	)
	cmd := &cobra.Command{
		Use:   "record [SCRIPT_ID...]",
		Short: "Replay demo scripts through the running boxd; each clean replay becomes the script's recording",
		Long: "record replays each script (all eight when none are named) through the daemon's real pipeline with\n" +
			"POST /demo/replay, using a new demo session per script (or --key). The daemon keeps every replay that\n" +
			"ends with done and no error event as the script's recording, served by GET /demo/recordings.\n" +
			"A replay takes the script's length divided by --speed (about 100 s at 1.0).",
		RunE: func(cmd *cobra.Command, args []string) error {
			if !replay.ValidSpeed(speed) {
				return configError{fmt.Errorf("--speed must be between 1.0 and 2.0, not %g", speed)}
			}
			list, err := pickScripts(args)
			if err != nil {
				return err
			}
			if url == "" {
				cfg, err := configs.Load(cmd.Flags())
				if err != nil {
					return configError{err}
				}
				url = baseURL(cfg.Listen)
			}
			rc := &recordClient{base: strings.TrimRight(url, "/"), key: key, http: &http.Client{Timeout: timeout}}
			failed := 0
			for _, s := range list {
				res, err := rc.record(cmd.Context(), s, speed)
				if err != nil {
					failed++
					fmt.Fprintf(cmd.OutOrStdout(), "%-28s failed: %v\n", s.ID, err)
					continue
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%-28s recorded: %d events, done.summary has %s\n", s.ID, res.events, strings.Join(res.summary, ", "))
			}
			if failed > 0 {
				return fmt.Errorf("%d of %d scripts were not recorded", failed, len(list))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&url, "url", "", "base URL of the running boxd (default: http:// and the configured listen address)")
	f.StringVar(&key, "key", "", "a dk_ developer key to replay with instead of a new demo session per script")
	f.Float64Var(&speed, "speed", 1.0, "replay speed, 1.0 to 2.0 (recorded at_ms values are paced at it)")
	f.DurationVar(&timeout, "timeout", 10*time.Minute, "longest wait for one replay")
	return cmd
}

// baseURL is the address a local client reaches listen at.
func baseURL(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "http://" + listen
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

type recordClient struct {
	base, key string
	http      *http.Client
}

type recordResult struct {
	events  int
	summary []string // the fields of done.summary
}

// apiError reads a refusal's {"error": ...}.
func apiError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(b, &e) == nil && e.Error != "" {
		return fmt.Errorf("%s: %s", resp.Status, e.Error)
	}
	return fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(b)))
}

func (c *recordClient) post(ctx context.Context, path, token string, body any) (*http.Response, error) {
	raw, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("is boxd running at %s? %w", c.base, err)
	}
	return resp, nil
}

// record replays one script and checks that the daemon recorded it.
func (c *recordClient) record(ctx context.Context, s scripts.Script, speed float64) (*recordResult, error) {
	token := c.key
	if token == "" {
		resp, err := c.post(ctx, "/demo/session", "", map[string]string{"vertical": s.Vertical})
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("creating a demo session: %w", apiError(resp))
		}
		var sess struct {
			Token string `json:"token"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&sess); err != nil || sess.Token == "" {
			return nil, fmt.Errorf("creating a demo session: unreadable answer (%v)", err)
		}
		token = sess.Token
	}
	started := time.Now().Unix()
	resp, err := c.post(ctx, "/demo/replay", token, map[string]any{"vertical": s.Vertical, "script_id": s.ID, "speed": speed})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("replay: %w", apiError(resp))
	}
	res := &recordResult{}
	var last map[string]any
	var problems []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			return nil, fmt.Errorf("replay: unreadable event: %v", err)
		}
		res.events++
		last = ev
		if ev["type"] == "error" {
			msg, _ := ev["message"].(string)
			problems = append(problems, msg)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("replay stream: %w", err)
	}
	if last == nil || last["type"] != "done" {
		if len(problems) > 0 {
			return nil, fmt.Errorf("the replay ended without done: %s", strings.Join(problems, "; "))
		}
		return nil, fmt.Errorf("the replay ended without done")
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("the replay finished with errors, so it was not recorded: %s", strings.Join(problems, "; "))
	}
	if sum, ok := last["summary"].(map[string]any); ok {
		for k := range sum {
			res.summary = append(res.summary, k)
		}
		sort.Strings(res.summary)
	}
	// The daemon writes the recording before the stream ends.
	ok, err := c.recorded(ctx, s.ID, started)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("the replay finished but GET /demo/recordings does not list a new recording of it")
	}
	return res, nil
}

func (c *recordClient) recorded(ctx context.Context, id string, since int64) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/demo/recordings", nil)
	if err != nil {
		return false, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, apiError(resp)
	}
	var list []recordingItem
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return false, fmt.Errorf("GET /demo/recordings: %w", err)
	}
	return slices.ContainsFunc(list, func(r recordingItem) bool { return r.ID == id && r.RecordedAt >= since }), nil
}

type recordingItem struct {
	ID         string `json:"id"`
	RecordedAt int64  `json:"recorded_at"`
}
