// Package daemon is boxd's composition root: every service, engine-backed
// pipeline, browser pool and outbound client is built here once, from the
// settings and what the command loaded (models, the store, the key), and
// every route family is mounted on the web server here, one line each
// (Mount). cmd/boxd calls New; route tests build the same box through
// daemontest. Nothing else builds a service.
package daemon

import (
	"encoding/json"
	"log/slog"
	"net"
	"time"

	"boxd/web/api"

	"boxd/configs"
	"boxd/engine/attest"
	"boxd/engine/browser"
	"boxd/engine/diarize"
	"boxd/engine/diarize/classical"
	"boxd/internal/platform"
	"boxd/internal/receipts"
	"boxd/internal/scratch"
	"boxd/internal/version"
	"boxd/pipelines/a11y"
	"boxd/pipelines/a11y/axe"
	"boxd/pipelines/a11y/domains"
	"boxd/pipelines/audit"
	"boxd/pipelines/chat"
	"boxd/pipelines/codes"
	"boxd/pipelines/docreader"
	"boxd/pipelines/fill"
	"boxd/pipelines/hcc"
	"boxd/pipelines/live"
	"boxd/pipelines/migration"
	"boxd/pipelines/oral"
	"boxd/pipelines/outbound"
	"boxd/pipelines/retrieval"
	"boxd/pipelines/sitecheck"
	"boxd/web"
	a11yroutes "boxd/web/routes/a11y"
	auditroutes "boxd/web/routes/audit"
	chatroutes "boxd/web/routes/chat"
	demoroutes "boxd/web/routes/demo"
	docreaderroutes "boxd/web/routes/docreader"
	fillroutes "boxd/web/routes/fill"
	hccroutes "boxd/web/routes/hcc"
	liveroutes "boxd/web/routes/live"
	migrationroutes "boxd/web/routes/migration"
	oralroutes "boxd/web/routes/oral"
	platformroutes "boxd/web/routes/platform"
	retrievalroutes "boxd/web/routes/retrieval"
	sitecheckroutes "boxd/web/routes/sitecheck"
	studioroutes "boxd/web/routes/studio"
)

// Deps are what the command loaded and hands the box.
type Deps struct {
	Probes   web.Probes
	Platform *platform.Platform
	Key      *attest.Key
	Receipts *receipts.Book
	// Chat serves chat completions; nil serves none (502 on the route).
	Chat *chat.Service
	// Outbound fetches for site checks and URL audits; nil builds one
	// from the outbound.* settings.
	Outbound *outbound.Client
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// LiveVerticals are the live audio verticals /ws/live and replays run,
	// by id; a vertical missing here closes 1011.
	LiveVerticals map[string]*live.Vertical
	// Transcribe starts speech recognition for a live session; nil closes
	// live sockets with 1011 (no models.asr.path).
	Transcribe live.StartTranscriber
	// LiveModels name the models in live ready events (LLM defaults to the
	// chat model id).
	LiveModels live.Models
	// Diarize is pass 2's diarizer (clinical and sales); nil: the
	// model-free boxd-classical-1 with the diarize.* bounds.
	Diarize *live.Diarization
	// Retrieval serves /retrieval/*; nil serves verify and info only (no
	// embedding model: index and search answer 503).
	Retrieval *retrieval.Service
	// Codes are the ICD-10-CM and RxNorm tables (data_dir); nil: the
	// chart reader (/hcc/read-chart) answers 503.
	Codes *codes.Tables
	// Resolver looks up the accessibility audit's DNS challenges (nil:
	// the system's resolver).
	Resolver *net.Resolver
	// MigrationCandidates are the open models migration.candidates
	// registers, loaded (the chat model is always the first candidate).
	MigrationCandidates []migration.Candidate
	// MigrationPrices replaces the shipped price table
	// (migration.price_table); nil: the shipped one.
	MigrationPrices *migration.PriceTable
}

// Box is the assembled daemon: the server and the services its routes
// serve from (tests reach them here).
type Box struct {
	Server *web.Server

	Chat        *chat.Service
	Retrieval   *retrieval.Service
	DocReader   *docreader.Service
	HCC         *hcc.Service
	A11y        *a11y.Service
	A11yDomains *domains.Registry
	// Fill serves /fill/*; FillErr says why it has no browser.
	Fill    *fill.Service
	FillErr error
	// FillGate bounds the fills read and run at once.
	FillGate *api.Gate
	// SiteCheck is nil when the outbound settings could not be applied
	// (OutboundErr says why).
	SiteCheck   *sitecheck.Checker
	OutboundErr error
	// ReplyTokens is the tokens per drafted review reply (0: the default).
	ReplyTokens int
	// LiveDebounce is how long live lanes wait for more sentences (0: the
	// session default).
	LiveDebounce time.Duration
	// Audit serves /audit/*; AuditErr says why endpoint targets are off.
	Audit    *audit.Service
	AuditErr error
	// Migration serves /migration/*.
	Migration *migration.Service
	// Oral serves /oral/*.
	Oral *oral.Service

	cfg  *configs.Config
	deps Deps
	log  *slog.Logger
	now  func() time.Time
}

// New builds every service of cfg once and mounts every route family on
// the server. tweak, when given, runs between the two (tests set knobs
// and stand-ins there).
func New(cfg *configs.Config, deps Deps, log *slog.Logger, tweak ...func(*Box)) *Box {
	if log == nil {
		log = slog.Default()
	}
	if deps.Platform == nil || deps.Key == nil || deps.Receipts == nil {
		panic("daemon.New: Deps.Platform, Deps.Key and Deps.Receipts are required")
	}
	if deps.Diarize == nil {
		deps.Diarize = ClassicalDiarization(cfg)
	}
	if deps.Probes.Diarizer == "" && deps.Diarize.Diarizer != nil {
		deps.Probes.Diarizer = deps.Diarize.Diarizer.Name()
	}
	b := &Box{cfg: cfg, deps: deps, log: log, now: deps.Now}
	if b.now == nil {
		b.now = time.Now
	}
	b.Chat = deps.Chat
	if b.Chat == nil {
		b.Chat = &chat.Service{ModelID: cfg.Models.LLM.ID}
	}
	b.Server = web.New(cfg, web.Deps{Probes: deps.Probes, Platform: deps.Platform, Now: b.now, ChatSequences: b.chatSequences}, log)
	if b.Chat.Meter == nil {
		b.Chat.Meter = b.Server.LLMMeter() // chat and live lanes count their tokens in /metrics
	}
	b.build()
	for _, t := range tweak {
		t(b)
	}
	b.mount()
	return b
}

// chatSequences is the chat model's parallel sequences (0: unknown).
func (b *Box) chatSequences() int {
	if e, ok := b.Chat.Engine.(interface{ Parallel() int }); ok {
		return e.Parallel()
	}
	return 0
}

// build makes every service once.
func (b *Box) build() {
	cfg, deps, log := b.cfg, b.deps, b.log
	b.DocReader = &docreader.Service{Key: deps.Key, Log: log, Chat: b.Chat, MaxPages: cfg.DocReader.MaxPages}
	b.HCC = &hcc.Service{Reader: b.DocReader, Chat: b.Chat, Codes: deps.Codes, Key: deps.Key, Log: log, Now: b.now}

	// The audit: chromium from the PATH, the rule engine from
	// a11y.axe_dir, the WCAG 2.2 table from data_dir. What is missing is
	// kept, and /a11y/audit answers 503 saying so. One tab audits every
	// page of a request: a minute a page (the motion watch alone takes
	// 6 s of one).
	b.A11y = &a11y.Service{Key: deps.Key, Log: log, Now: b.now, Chat: b.Chat}
	b.A11y.Browser, b.A11y.BrowserErr = browser.NewPool(browser.Options{Slots: 2, TabTimeout: 5 * time.Minute, Log: log})
	b.A11y.Axe, b.A11y.AxeErr = axe.Load(cfg.A11y.AxeDir)
	if crit, err := axe.LoadCriteria(cfg.DataDir); err == nil {
		b.A11y.Criteria = crit
	}

	// The form filler: its own browser pool (fresh profile per run), the
	// chat model, the box's key; runs kept 24 hours.
	pool, err := browser.NewPool(browser.Options{Slots: 2, Log: log})
	b.Fill = &fill.Service{Browser: pool, Chat: b.Chat, Reader: b.DocReader, Key: deps.Key, Now: b.now, Log: log, Inbox: &fill.Inbox{}}
	b.FillErr = err
	b.FillGate = api.NewGate(fillroutes.Slots, "form fills")

	b.Retrieval = deps.Retrieval
	if b.Retrieval == nil {
		b.Retrieval = &retrieval.Service{}
	}
	if b.Retrieval.Key == nil {
		b.Retrieval.Key = deps.Key
	}
	if b.Retrieval.Receipts == nil {
		b.Retrieval.Receipts = deps.Receipts
	}
	// The indexes held per owner and by demo sessions together
	// (retrieval.* settings; pipelines/retrieval/quota.go).
	if c := cfg.Retrieval; b.Retrieval.Quota == (retrieval.Quota{}) {
		b.Retrieval.Quota = retrieval.Quota{Max: c.MaxIndexes, PerKey: c.IndexesPerKey, Demo: c.DemoIndexes, PerDemo: c.IndexesPerDemo}
	}

	// The one outbound client: site checks, URL audits and the domain
	// challenges fetch through it.
	ob := deps.Outbound
	if ob == nil {
		p, err := outbound.PolicyFromSettings(cfg.Outbound.AllowPrivate, cfg.Outbound.AllowCIDRs, cfg.Outbound.CAFile, "boxd-sitecheck/"+version.Version)
		if err != nil {
			b.OutboundErr = err
		} else {
			ob = outbound.New(p)
		}
	}
	ver := &domains.Verifier{Resolver: deps.Resolver}
	if ob != nil {
		b.SiteCheck = &sitecheck.Checker{Client: ob, Key: deps.Key, Now: b.now}
		b.A11y.Fetch = a11y.Outbound{Client: ob}
		ver.Client = ob
	}
	b.A11yDomains = &domains.Registry{Store: deps.Platform.Store(), Verifier: ver, Now: b.now}
	b.buildAudit()
	b.buildMigration()
	b.Oral = &oral.Service{Key: deps.Key, Chat: b.Chat, Now: b.now}

	// The files of requests a boxd that crashed or was killed left
	// behind go now (package scratch).
	if n, err := scratch.Prepare(""); err != nil {
		log.Warn("the scratch directory is not ready", "err", err)
	} else if n > 0 {
		log.Info("scratch files of stopped boxd processes removed (uploads, fill sources, browser profiles)", "directories", n)
	}
}

// mount declares every route family on the server: one line a family.
func (b *Box) mount() {
	a, d, log := b.Server.API(), b.deps, b.log
	liveModels := d.LiveModels
	if liveModels.LLM == "" {
		liveModels.LLM = b.Chat.ModelID
	}
	platformroutes.Mount(a, platformroutes.Deps{Log: log, Config: b.cfg, Platform: d.Platform, Key: d.Key, Receipts: d.Receipts})
	chatroutes.Mount(a, chatroutes.Deps{Log: log, Now: b.now, Service: b.Chat, Started: b.Server.Started(), Retrieval: b.Retrieval})
	sitecheckroutes.Mount(a, sitecheckroutes.Deps{Log: log, Chat: b.Chat, Checker: b.SiteCheck, OutboundErr: b.OutboundErr, ReplyTokens: b.ReplyTokens})
	sessions := &live.Opener{Verticals: d.LiveVerticals, Chat: b.Chat, Models: liveModels, Debounce: b.LiveDebounce, Now: b.now, Diarize: d.Diarize}
	liveroutes.Mount(a, liveroutes.Deps{Log: log, Config: b.cfg, Now: b.now, Sessions: sessions, Transcribe: d.Transcribe})
	demoroutes.Mount(a, demoroutes.Deps{Log: log, Config: b.cfg, Now: b.now, Sessions: sessions, Transcribe: d.Transcribe})
	studioroutes.Mount(a, studioroutes.Deps{Log: log, Config: b.cfg, Now: b.now, Platform: d.Platform, Chat: b.Chat})
	retrievalroutes.Mount(a, retrievalroutes.Deps{Log: log, Service: b.Retrieval, Scans: b.scans,
		Gate: api.NewGate(1, "retrieval requests").Says("the retrieval service runs one request at a time and one is running; retry after the time in Retry-After")})
	docreaderroutes.Mount(a, docreaderroutes.Deps{Log: log, Service: b.DocReader})
	hccroutes.Mount(a, hccroutes.Deps{Log: log, Service: b.HCC})
	a11yroutes.Mount(a, a11yroutes.Deps{Log: log, Service: b.A11y, Domains: b.A11yDomains})
	fillroutes.Mount(a, fillroutes.Deps{Log: log, Service: b.Fill, BrowserErr: b.FillErr, Key: d.Key, Gate: b.FillGate})
	b.Audit.Chat = b.Chat // a tweak may have replaced the chat model
	auditroutes.Mount(a, auditroutes.Deps{Log: log, Service: b.Audit, Key: d.Key})
	b.Migration.Candidates[0].Model, b.Migration.Judge = b.Chat, b.judge() // a tweak may have replaced the chat model
	migrationroutes.Mount(a, migrationroutes.Deps{Log: log, Service: b.Migration, Key: d.Key})
	b.Oral.Chat = b.Chat
	oralroutes.Mount(a, oralroutes.Deps{Log: log, Service: b.Oral, Key: d.Key})
}

// ClassicalDiarization is pass 2's model-free diarizer, boxd-classical-1,
// with cfg's diarize.* bounds.
func ClassicalDiarization(cfg *configs.Config) *live.Diarization {
	return &live.Diarization{Diarizer: classical.Diarizer{}, Options: DiarizeOptions(cfg), MaxAudioS: cfg.Diarize.MaxAudioS}
}

// DiarizeOptions are cfg's speaker bounds.
func DiarizeOptions(cfg *configs.Config) diarize.Options {
	return diarize.Options{MinSpeakers: cfg.Diarize.MinSpeakers, MaxSpeakers: cfg.Diarize.MaxSpeakers}
}

// scans checks a document reader document with the reader's own
// verification (this box's key pinned) and hands retrieval its elements.
func (b *Box) scans(raw json.RawMessage) (*retrieval.Scan, error) {
	d, err := b.DocReader.Checked(raw)
	if err != nil {
		return nil, err
	}
	sc := &retrieval.Scan{ID: d.ID}
	for _, p := range d.Pages {
		for _, e := range p.Elements {
			sc.Elements = append(sc.Elements, retrieval.ScanElement{ID: e.ID, Kind: e.Kind, Page: e.Page, BBox: e.BBox, Text: e.Text})
		}
	}
	return sc, nil
}
