package docreader

import (
	"bytes"
	"cmp"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"math"
	"os"
	"unicode/utf8"

	"boxd/engine/raster"
	"boxd/internal/ids"
	"boxd/internal/problem"
	"boxd/internal/run"
	"boxd/pipelines/docreader/chart"
	"boxd/pipelines/docreader/chart/forest"
	"boxd/pipelines/docreader/ocr"
	"boxd/pipelines/docreader/samples"
)

// Chart methods (contract 3, section 4).
const (
	MethodHybrid   = "hybrid"
	MethodModel    = "model"
	MethodGeometry = "geometry"
)

// The chart samples: a Kaplan–Meier chart, a forest plot, a bar chart
// and a line chart.
const (
	SampleChart  = samples.Chart
	SampleForest = samples.Forest
	SampleBar    = samples.Bar
	SampleLine   = samples.Line
)

// chartSamples are the chart samples' ids and images.
var chartSamples = map[string]func() ([]byte, error){
	SampleChart: samples.ChartPNG, SampleForest: samples.ForestPNG, SampleBar: samples.BarPNG, SampleLine: samples.LinePNG,
}

// MaxHintChars bounds a chart request's hint.
const MaxHintChars = 500

// ChartRequest is POST /docreader/chart's body. image_b64 arrives as an
// upload: File is its temporary file.
type ChartRequest struct {
	File      string `json:"-"`
	Synthetic *bool  `json:"synthetic"`
	Sample    string `json:"sample"`
	Method    string `json:"method"`
	Hint      string `json:"hint"`
}

// SyntheticClaim names the caller's own data the body carries
// (image_b64; none for a sample) and its synthetic flag
// (limits.require_synthetic).
func (r *ChartRequest) SyntheticClaim() (string, *bool) {
	if r.File == "" {
		return "", nil
	}
	return "image_b64", r.Synthetic
}

// Validate checks the body before the image is read.
func (r *ChartRequest) Validate() error {
	hasFile := r.File != ""
	switch {
	case hasFile && r.Sample != "":
		return problem.New(problem.Invalid, "send image_b64 or sample, not both")
	case !hasFile && r.Sample == "":
		return problem.New(problem.Invalid, "send image_b64 (a base64 PNG, JPEG or WebP chart) or sample (%s, %s, %s or %s)", SampleChart, SampleForest, SampleBar, SampleLine)
	case r.Sample != "" && chartSamples[r.Sample] == nil:
		return problem.New(problem.NotFound, "no chart sample %q; the chart samples are %s, %s, %s and %s", r.Sample, SampleChart, SampleForest, SampleBar, SampleLine)
	case r.Method != "" && r.Method != MethodHybrid && r.Method != MethodModel && r.Method != MethodGeometry:
		return problem.New(problem.Invalid, "method %q: use hybrid, model or geometry", r.Method)
	case utf8.RuneCountInString(r.Hint) > MaxHintChars:
		return problem.New(problem.Invalid, "hint is over %d characters", MaxHintChars)
	}
	return nil
}

// ServeChart is POST /docreader/chart's run: Chart, then done with the
// result (the run's last event).
func (s *Service) ServeChart(ctx context.Context, env run.Env, req ChartRequest) (*chart.Result, error) {
	out, err := s.Chart(ctx, env, req)
	if err != nil {
		return nil, err
	}
	env.Events.End(run.TypeDone, out)
	return out, nil
}

// Chart reads a chart image into data by geometry (one read at a time,
// as documents). env.Budget and env.Events serve the model's reading
// (method model, or hybrid when the axes do not calibrate, or names the
// geometry could not read); a nil Budget makes no model calls, nil
// Events sends no events.
func (s *Service) Chart(ctx context.Context, env run.Env, req ChartRequest) (*chart.Result, error) {
	s.init()
	if err := req.Validate(); err != nil {
		return nil, err
	}
	var data []byte
	var err error
	if req.File != "" {
		if data, err = os.ReadFile(req.File); err != nil {
			return nil, fmt.Errorf("docreader: the upload: %w", err)
		}
	} else if data, err = chartSamples[req.Sample](); err != nil {
		return nil, fmt.Errorf("docreader: the chart sample %s: %w", req.Sample, err)
	}
	if len(data) == 0 {
		return nil, problem.New(problem.Invalid, "image_b64 is empty: send the chart's bytes in base64")
	}
	if len(data) > MaxFileBytes {
		return nil, problem.New(problem.TooLarge, "image_b64 decodes to %d bytes; at most %d (12 MB)", len(data), MaxFileBytes)
	}
	typ := sniff(data)
	if typ != TypePNG && typ != TypeJPEG && typ != TypeWebP {
		return nil, problem.New(problem.Unsupported, "image_b64 is not a PNG, JPEG or WebP image (its first bytes say otherwise)")
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, problem.Wrap(problem.Invalid, err, "image_b64 is not a %s image that decodes: %v", typ, err)
	}
	if int64(cfg.Width)*int64(cfg.Height) > MaxPagePixels {
		return nil, problem.New(problem.TooLarge, "the image is %d × %d pixels; at most %d pixels are read: scale it down", cfg.Width, cfg.Height, MaxPagePixels)
	}
	if cfg.Width > ocr.MaxSide || cfg.Height > ocr.MaxSide {
		return nil, problem.New(problem.TooLarge, "the image is %d × %d pixels; at most %d pixels a side are read: crop it to the chart", cfg.Width, cfg.Height, ocr.MaxSide)
	}
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, problem.Wrap(problem.Invalid, err, "image_b64 is not a %s image that decodes: %v", typ, err)
	}
	sees := s.Chat.Sees()
	if req.Method == MethodModel && !sees {
		return nil, problem.New(problem.Unavailable, "method model: reading a chart with a vision model needs a chat model that sees images, and this box has none (the operator sets models.llm.projector); use geometry or hybrid")
	}
	release, err := s.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	img := raster.FromImage(src)
	sum := sha256.Sum256(data)
	r := &chart.Result{ID: ids.New("chart-", 12), Models: []any{}, Receipts: []chart.ModelCallRef{},
		Image: chart.Image{SHA256: hex.EncodeToString(sum[:]), Type: typ, Width: img.W, Height: img.H, PixelSHA256: img.PixelHash()}}
	rev := chart.Revisions{Chart: chart.Revision, OCR: "none"}
	if req.Method == MethodModel {
		err = s.modelChart(ctx, env, req, img, r, "the model's reading: nothing in it is measured from the drawing (no axes calibrated, no numbers checked against the curves)")
	} else {
		err = s.geometryChart(ctx, env, req, img, r, &rev, sees)
	}
	if err != nil {
		return nil, err
	}
	if err := chart.Sign(s.Key, r, rev, req.File == "" || (req.Synthetic != nil && *req.Synthetic)); err != nil {
		return nil, fmt.Errorf("docreader: sign the chart: %w", err)
	}
	s.Log.Info("docreader chart", "result", r.ID, "image_sha256", r.Image.SHA256, "method", r.Method, "series", len(r.Chart.Series), "flagged", r.Chart.Flagged, "receipt", r.Receipt.ID)
	return r, nil
}

// geometryChart reads the chart by geometry (methods geometry and
// hybrid); where the axes cannot be calibrated, or there is no OCR, a
// hybrid read falls back to the model's reading, marked so.
func (s *Service) geometryChart(ctx context.Context, env run.Env, req ChartRequest, img *raster.Image, r *chart.Result, rev *chart.Revisions, sees bool) error {
	o, err := s.tesseract()
	if err != nil {
		if req.Method != MethodGeometry && sees {
			return s.modelChart(ctx, env, req, img, r, "hybrid: this box has no OCR to calibrate the axes (tesseract-ocr-eng), so this is the model's reading, not measured from the drawing")
		}
		return problem.Wrap(problem.Unavailable, err, "the chart reader needs OCR for the axes' labels, and this box has none (the operator should install tesseract-ocr-eng)")
	}
	rev.OCR = "tesseract-" + o.Version() + " eng"
	c, err := readChart(ctx, o, img)
	var nc *chart.NotCalibrated
	switch {
	case errors.As(err, &nc) && req.Method == MethodGeometry:
		return problem.Wrap(problem.Unprocessable, err, "%v; geometry cannot read this chart", err)
	case errors.As(err, &nc) && sees:
		return s.modelChart(ctx, env, req, img, r, fmt.Sprintf("hybrid: %v, so this is the model's reading, not measured from the drawing", err))
	case errors.As(err, &nc):
		return problem.Wrap(problem.Unavailable, err, "%v, and the model's reading, which the hybrid method falls back to, needs a chat model that sees images (models.llm.projector)", err)
	case err != nil:
		if p := engineProblem(0, err); p != nil {
			return p
		}
		return err
	}
	r.Method, r.Chart, r.ConfBP = MethodGeometry, c, confidence(c)
	if req.Method != MethodGeometry {
		r.Note = "hybrid: the axes calibrated, so the chart was measured from the drawing"
		if sees && env.Budget != nil {
			// Series the geometry could not name: the model reads their
			// labels (the numbers stay measured).
			m := &chart.Model{Chat: s.Chat, Budget: env.Budget, Events: env.Events}
			res, err := m.Labels(ctx, img, c)
			if res != nil && res.Receipt != nil {
				r.Receipts = append(r.Receipts, chart.ModelCallRef{ID: res.Receipt.ID, Kind: "chart-labels"})
				r.Models = append(r.Models, ModelRef{Role: "chart-labels", Repo: s.Chat.ModelID, Revision: s.Chat.WeightsRoot})
				r.Note += "; the series without a label read from the chart's words were named by the model (name_from: model)"
			}
			switch {
			case err != nil && ctx.Err() != nil:
				return ctx.Err()
			case err != nil:
				r.Note += "; the model could not name the series without a label (" + err.Error() + ")"
			}
		}
	}
	return nil
}

// modelChart is the model's reading of the chart, marked with note.
func (s *Service) modelChart(ctx context.Context, env run.Env, req ChartRequest, img *raster.Image, r *chart.Result, note string) error {
	if env.Budget == nil {
		return problem.New(problem.Internal, "docreader: a model reading needs the caller's budget")
	}
	m := &chart.Model{Chat: s.Chat, Budget: env.Budget, Events: env.Events}
	c, res, err := m.Read(ctx, img, req.Hint)
	if res != nil && res.Receipt != nil {
		r.Receipts = append(r.Receipts, chart.ModelCallRef{ID: res.Receipt.ID, Kind: "chart"})
	}
	if err != nil {
		return err
	}
	r.Method, r.Chart, r.ConfBP, r.Note = MethodModel, c, 0, note
	r.Models = append(r.Models, ModelRef{Role: "chart", Repo: s.Chat.ModelID, Revision: s.Chat.WeightsRoot})
	return nil
}

// readChart OCRs a chart as sparse text at 288 DPI-equivalent and reads
// it, reading missed labels again one box at a time.
func readChart(ctx context.Context, o *ocr.OCR, img *raster.Image) (*chart.Chart, error) {
	const dpi = Scale * 72
	conv := func(ws []ocr.Word) []chart.Word {
		out := make([]chart.Word, len(ws))
		for i, w := range ws {
			out[i] = chart.Word{Text: w.Text, Box: w.Box}
		}
		return out
	}
	ws, err := o.ReadRegion(ctx, img, nil, raster.Box{X1: float64(img.W), Y1: float64(img.H)}, dpi)
	if err != nil {
		return nil, err
	}
	var rerr error
	opt := chart.Options{Reread: func(b raster.Box) []chart.Word {
		ws, err := o.ReadBlock(ctx, img, nil, b, dpi)
		if err != nil {
			rerr = err
			return nil
		}
		return conv(ws)
	}}
	// A forest plot first: its rows are specific (an interval with a
	// block on it), and a survival chart has none; then a bar chart (solid
	// bars rising from the axis, which a survival curve never fills).
	if c, err := forest.Read(img, conv(ws), opt); err == nil || rerr != nil {
		return c, cmp.Or(rerr, err)
	}
	if c, err := chart.ReadBar(img, conv(ws), opt); err == nil || rerr != nil {
		return c, cmp.Or(rerr, err)
	}
	c, err := chart.Read(img, conv(ws), opt)
	if rerr != nil {
		return nil, rerr
	}
	if err == nil {
		// A curve that rises makes it a line chart.
		if lc, lerr := chart.LineFrom(img, conv(ws), c); lerr == nil {
			return lc, nil
		}
	}
	return c, err
}

// confidence is 10000 less each axis's worst label residual as a share of
// its range (basis points; a log axis's residual and range in its
// logarithms), at least 0.
func confidence(c *chart.Chart) int {
	bp := 10000.0
	for _, a := range []chart.Axis{c.X, c.Y} {
		r := a.Max - a.Min
		if a.Log && a.Min > 0 {
			r = math.Log(a.Max) - math.Log(a.Min)
		}
		if r > 0 {
			bp -= 10000 * a.ResidualMax / r
		}
	}
	return max(0, int(bp+0.5))
}

// ChartVerifyRequest is POST /docreader/chart/verify's body.
type ChartVerifyRequest struct {
	Chart json.RawMessage `json:"chart"`
}

// ChartVerify checks a chart result: signature, signer, table, image.
func (s *Service) ChartVerify(req ChartVerifyRequest) (*VerifyResponse, error) {
	if len(req.Chart) == 0 || string(req.Chart) == "null" {
		return nil, problem.New(problem.Invalid, "chart is missing: send the result POST /docreader/chart returned")
	}
	r, err := chart.DecodeResult(req.Chart)
	if err != nil {
		return nil, problem.Wrap(problem.Invalid, err, "chart is not a result as POST /docreader/chart returned it: %v", err)
	}
	var pub ed25519.PublicKey
	if s.Key != nil {
		pub = s.Key.PublicKey()
	}
	cs, err := chart.Verify(r, pub)
	if err != nil {
		return nil, problem.Wrap(problem.Invalid, err, "chart.receipt is not a %s receipt: %v", chart.ReceiptFormat, err)
	}
	ok := true
	for _, c := range cs {
		ok = ok && c.OK
	}
	return &VerifyResponse{OK: ok, Checks: cs}, nil
}

// chartMargin pads a figure's box when it is read as a chart (tick
// labels and the number-at-risk table sit just outside an image's box
// when they are text).
const chartMargin = 12

// pageCharts reads charts on a page: each figure element, and each
// drawing outside the elements (vectorRegions: vectors on a born-digital
// page; on a scan the plot, widened by its labels), a scanned page with
// no drawing tried whole; regions that do not calibrate are not charts
// and are skipped, except figure elements when the model reads figures
// (rd.figures): the model's reading, when it says the figure is a chart.
func (rd *reader) pageCharts(ctx context.Context, p *Page, img *raster.Image) error {
	if rd.ocr == nil {
		return nil
	}
	type region struct {
		el  string
		box raster.Box
	}
	var regions []region
	for _, e := range p.Elements {
		if e.Kind == KindFigure && e.BBox[2] >= 200 && e.BBox[3] >= 150 {
			b := raster.Box{X0: float64(e.BBox[0] - chartMargin), Y0: float64(e.BBox[1] - chartMargin),
				X1: float64(e.BBox[0] + e.BBox[2] + chartMargin), Y1: float64(e.BBox[1] + e.BBox[3] + chartMargin)}
			regions = append(regions, region{e.ID, b})
		}
	}
	// Drawings outside every element: vectors on a born-digital page,
	// figures on a scan.
	for _, b := range vectorRegions(p, img) {
		if p.Source == PageOCR {
			b = withLabels(b, p.Elements)
		}
		regions = append(regions, region{"", b})
	}
	if p.Source == PageOCR && len(regions) == 0 {
		regions = append(regions, region{"", raster.Box{X1: float64(img.W), Y1: float64(img.H)}})
	}
	for _, r := range regions {
		crop, x0, y0 := img.Crop(r.box, 1)
		if crop.W == 0 || crop.H == 0 {
			continue
		}
		bbox := raster.Box{X0: float64(x0), Y0: float64(y0), X1: float64(x0 + crop.W), Y1: float64(y0 + crop.H)}.BBox()
		c, err := readChart(ctx, rd.ocr, crop)
		var nc *chart.NotCalibrated
		switch {
		case errors.As(err, &nc) && r.el != "" && rd.figures != nil:
			// A figure element whose axes do not calibrate: the model's
			// reading, marked so (hybrid). Whole scanned pages and
			// drawings found among the vectors are not figures the
			// document declares, and are not sent to the model.
			mc, ok, err := rd.figures.Read(ctx, crop)
			if err != nil {
				return err
			}
			if ok {
				rd.charts = append(rd.charts, DocChart{Element: r.el, Page: p.Page, BBox: bbox, Chart: mc, Method: MethodModel,
					Note: fmt.Sprintf("%v, so this is the model's reading, not measured from the drawing", nc)})
			}
			continue
		case errors.As(err, &nc):
			continue
		case err != nil:
			return pageError(p.Page, err)
		}
		c.Shift(float64(x0), float64(y0))
		rd.charts = append(rd.charts, DocChart{Element: r.el, Page: p.Page, BBox: bbox, ConfBP: confidence(c), Chart: c, Method: MethodGeometry})
	}
	return nil
}

// labelReach is how far from a drawing found on a scan the text that
// belongs to it (tick labels, a legend, numbers at risk) may start.
const labelReach = 40

// withLabels widens a drawing found on a scan by the elements within
// labelReach of it: OCR reads a chart's labels, its legend and its
// numbers at risk (and an axis drawn through tick labels) as text, so
// the drawing left outside the elements is the plot's inside alone. One
// pass: the text above a legend is not pulled in by the legend.
func withLabels(b raster.Box, els []Element) raster.Box {
	out := b
	for _, e := range els {
		eb := raster.Box{X0: float64(e.BBox[0]), Y0: float64(e.BBox[1]), X1: float64(e.BBox[0] + e.BBox[2]), Y1: float64(e.BBox[1] + e.BBox[3])}
		if eb.X0 < b.X1+labelReach && eb.X1 > b.X0-labelReach && eb.Y0 < b.Y1+labelReach && eb.Y1 > b.Y0-labelReach {
			out = out.Union(eb)
		}
	}
	return raster.Box{X0: out.X0 - chartMargin, Y0: out.Y0 - chartMargin, X1: out.X1 + chartMargin, Y1: out.Y1 + chartMargin}
}

// vectorRegions finds the drawings on a born-digital page that are not
// images (charts drawn as lines and filled shapes): ink outside every
// element (text, tables, figures; each with 3 pixels around it), in
// cells of 8 pixels holding at least 6 such pixels, joined across
// one-cell gaps; a group at least 200 × 150 pixels is a drawing. Each
// comes back widened by the room its labels take (160 pixels left, 100
// below, 24 above and right), as the chart reader looks for them.
func vectorRegions(p *Page, img *raster.Image) []raster.Box {
	const cell = 8
	gw, gh := (img.W+cell-1)/cell, (img.H+cell-1)/cell
	masked := make([]bool, img.W*img.H)
	for _, e := range p.Elements {
		for y := max(0, e.BBox[1]-3); y < min(img.H, e.BBox[1]+e.BBox[3]+3); y++ {
			for x := max(0, e.BBox[0]-3); x < min(img.W, e.BBox[0]+e.BBox[2]+3); x++ {
				masked[y*img.W+x] = true
			}
		}
	}
	count := make([]int, gw*gh)
	for y := range img.H {
		for x := range img.W {
			if masked[y*img.W+x] {
				continue
			}
			q := img.Pix[3*(y*img.W+x):]
			if hi, lo := max(q[0], q[1], q[2]), min(q[0], q[1], q[2]); int(hi)-int(lo) > 60 || (int(q[0])+int(q[1])+int(q[2]))/3 < 200 {
				count[(y/cell)*gw+x/cell]++
			}
		}
	}
	on := func(x, y int) bool { return x >= 0 && y >= 0 && x < gw && y < gh && count[y*gw+x] >= 6 }
	seen := make([]bool, gw*gh)
	var out []raster.Box
	for start := range gw * gh {
		if seen[start] || count[start] < 6 {
			continue
		}
		x0, y0, x1, y1 := gw, gh, -1, -1
		stack := []int{start}
		seen[start] = true
		for len(stack) > 0 {
			i := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			x, y := i%gw, i/gw
			x0, y0, x1, y1 = min(x0, x), min(y0, y), max(x1, x), max(y1, y)
			for dy := -2; dy <= 2; dy++ {
				for dx := -2; dx <= 2; dx++ {
					if nx, ny := x+dx, y+dy; on(nx, ny) && !seen[ny*gw+nx] {
						seen[ny*gw+nx] = true
						stack = append(stack, ny*gw+nx)
					}
				}
			}
		}
		w, h := (x1-x0+1)*cell, (y1-y0+1)*cell
		if w < 200 || h < 150 {
			continue
		}
		out = append(out, raster.Box{X0: float64(max(0, x0*cell-160)), Y0: float64(max(0, y0*cell-24)),
			X1: float64(min(img.W, (x1+1)*cell+24)), Y1: float64(min(img.H, (y1+1)*cell+100))})
	}
	return out
}
