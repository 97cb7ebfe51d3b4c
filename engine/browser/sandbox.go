package browser

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/chromedp"

	"boxd/internal/scratch"
)

// The browser's network sandbox. The tab's policy (the Fetch domain)
// sees every request a page makes; it does not see what the browser does
// below the page: DNS look-ups for link hints, preconnects, WebRTC's
// sockets, and the browser's own background services (component and
// update checks, network time, autofill and optimisation servers, safe
// browsing, translation, spelling dictionaries). Each chromium is started
// so that it can do none of that:
//
//   - host-resolver-rules "MAP * ~NOTFOUND": every name the browser would
//     resolve fails at once, without a DNS query (the page's own origin
//     is answered through the Fetch domain, or fetched by the policy's
//     fetcher in Go, never by the browser). The sink's own address is
//     excluded so that what tries to connect is seen there.
//   - proxy-server: every connection the browser would open (HTTP,
//     HTTPS, WebSocket, preconnect) goes to the sink, a listener in this
//     process that notes what was asked and refuses it;
//     proxy-bypass-list "<-loopback>" sends loopback there too.
//   - force-webrtc-ip-handling-policy and webrtc-ip-handling-policy
//     "disable_non_proxied_udp": WebRTC gathers no UDP candidate and may
//     only reach out through the proxy, which is the sink; disable-quic:
//     no QUIC (UDP) either.
//   - no-pings (<a ping>), and the profile's preferences: no network
//     prediction (DNS prefetch, preconnect, prerender), no safe browsing,
//     no autofill, no translation, no search suggestions, no spelling
//     service or dictionaries, no sign-in, no alternate error pages.
//   - the background services are switched off one by one (flags below,
//     each with its reason), so that the sink sees nothing at all in a
//     plain run.
//
// engine/browser's TestNetworkSandbox proves it in a network namespace
// whose only resolver and hosts are a recorder (browsertest.SandboxMain):
// no DNS query and no connection reaches it.
type sandbox struct {
	dir  string       // the profile, with its preferences
	sink net.Listener // the proxy every connection of the browser meets
	tab  atomic.Pointer[Tab]
	wg   sync.WaitGroup
	once sync.Once
}

// disabledFeatures are chromium features that reach the network, or
// that chromedp's defaults disable (Translate, BlinkGenPropertyTrees:
// the flag is one list, so they are repeated here).
var disabledFeatures = []string{
	"Translate",                               // page translation (translate.googleapis.com)
	"BlinkGenPropertyTrees",                   // chromedp's default
	"AutofillServerCommunication",             // autofill's field-type server (content-autofill.googleapis.com)
	"OptimizationHints",                       // the optimisation guide (optimizationguide-pa.googleapis.com)
	"OptimizationHintsFetching",               // its hint fetches
	"OptimizationGuideModelDownloading",       // its model downloads
	"OptimizationTargetPrediction",            // its on-device models
	"NetworkTimeServiceQuerying",              // network time (clients2.google.com/time/1/current)
	"MediaRouter",                             // Cast discovery (mDNS, SSDP)
	"DialMediaRouteProvider",                  // DIAL discovery
	"CertificateTransparencyComponentUpdater", // CT log list updates
	"InterestFeedContentSuggestions",          // the new-tab feed
	"SpeculationRulesPrefetchProxy",           // prefetch through Google's private proxy
	"Prerender2",                              // prerendering from speculation rules
	"PrivacySandboxSettings4",                 // the ad topics and attribution reporting settings
	"InterestGroupStorage",                    // protected-audience auctions
	"BrowsingTopics",                          // topics
	"FedCm",                                   // federated sign-in to identity providers
	"UseDnsHttpsSvcb",                         // HTTPS records (DNS)
	"LensOverlay",                             // Lens uploads
	"PasswordLeakDetection",                   // password leak checks
	"KAnonymityService",                       // k-anonymity server
}

// preferences are the profile's: every network prediction and every
// service that would call out is off.
var preferences = map[string]any{
	"net":                                  map[string]any{"network_prediction_options": 2}, // never
	"safebrowsing":                         map[string]any{"enabled": false, "enhanced": false},
	"autofill":                             map[string]any{"enabled": false, "profile_enabled": false, "credit_card_enabled": false},
	"translate":                            map[string]any{"enabled": false},
	"alternate_error_pages":                map[string]any{"enabled": false},
	"search":                               map[string]any{"suggest_enabled": false},
	"spellcheck":                           map[string]any{"dictionaries": []string{}, "use_spelling_service": false},
	"browser":                              map[string]any{"enable_spellchecking": false},
	"signin":                               map[string]any{"allowed": false},
	"credentials_enable_service":           false,
	"profile":                              map[string]any{"password_manager_enabled": false},
	"url_keyed_anonymized_data_collection": map[string]any{"enabled": false},
	"webrtc": map[string]any{"ip_handling_policy": "disable_non_proxied_udp", "multiple_routes_enabled": false,
		"nonproxied_udp_enabled": false},
	"privacy_sandbox":    map[string]any{"m1": map[string]any{"topics_enabled": false, "fledge_enabled": false, "ad_measurement_enabled": false}},
	"domain_reliability": map[string]any{"allowed_by_policy": false},
}

// newSandbox makes a tab's profile and starts its sink.
func newSandbox() (*sandbox, error) {
	dir, err := scratch.Dir("chromium-")
	if err != nil {
		return nil, fmt.Errorf("make the browser's profile: %w", err)
	}
	prefs, _ := json.Marshal(preferences)
	err = os.MkdirAll(filepath.Join(dir, "Default"), 0o700)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "Default", "Preferences"), prefs, 0o600)
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("write the browser's preferences: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start the browser's sink: %w", err)
	}
	sb := &sandbox{dir: dir, sink: ln}
	sb.wg.Add(1)
	go sb.serve()
	return sb, nil
}

// options are the chromium switches of the sandbox (see sandbox).
func (sb *sandbox) options() []chromedp.ExecAllocatorOption {
	sink := sb.sink.Addr().String()
	return []chromedp.ExecAllocatorOption{
		chromedp.UserDataDir(sb.dir),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
		chromedp.ProxyServer("http://" + sink),
		chromedp.Flag("proxy-bypass-list", "<-loopback>"),
		chromedp.Flag("force-webrtc-ip-handling-policy", "disable_non_proxied_udp"),
		chromedp.Flag("webrtc-ip-handling-policy", "disable_non_proxied_udp"),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-pings", true),
		chromedp.Flag("disable-features", strings.Join(disabledFeatures, ",")),
		// Background services, each its own switch as well as the
		// features above.
		chromedp.Flag("disable-background-networking", true), // the umbrella switch: variations, update and other pings
		chromedp.Flag("disable-component-update", true),      // component updater (update.googleapis.com, /service/update2/json)
		chromedp.Flag("disable-domain-reliability", true),    // domain reliability beacons
		chromedp.Flag("disable-sync", true),                  // sync
		chromedp.Flag("disable-breakpad", true),              // crash uploads
		chromedp.Flag("disable-crash-reporter", true),        // crash uploads
		chromedp.Flag("disable-client-side-phishing-detection", true),
		chromedp.Flag("safebrowsing-disable-auto-update", true), // safe browsing lists
		chromedp.Flag("disable-default-apps", true),             // no default apps to install
		chromedp.Flag("disable-extensions", true),               // no extensions, no extension updates
		chromedp.Flag("metrics-recording-only", true),           // metrics never uploaded
		chromedp.Flag("no-service-autorun", true),
		chromedp.Flag("disable-field-trial-config", true),      // no field trials (variations seed)
		chromedp.Flag("variations-server-url", "http://"+sink), // if a seed were fetched, it would meet the sink
		chromedp.Flag("disable-speech-api", true),              // speech recognition goes to a server
		chromedp.Flag("dns-prefetch-disable", true),            // older builds' DNS prefetch switch
		chromedp.Flag("disable-sync-preferences", true),
		chromedp.Flag("no-first-run", true),
	}
}

// serve notes each connection the browser opened to the sink (what it
// asked for, as a refused request of the tab's) and refuses it.
func (sb *sandbox) serve() {
	defer sb.wg.Done()
	for {
		c, err := sb.sink.Accept()
		if err != nil {
			return
		}
		sb.wg.Add(1)
		go func() {
			defer sb.wg.Done()
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(2 * time.Second))
			line, _ := bufio.NewReader(c).ReadString('\n')
			method, target, _ := strings.Cut(strings.TrimSpace(line), " ")
			target, _, _ = strings.Cut(target, " ")
			if t := sb.tab.Load(); t != nil && method != "" {
				if method == "CONNECT" {
					target = "https://" + target + "/"
				}
				r := Refused{Method: method, URL: target, Type: "Other", Why: "the browser tried to connect by itself (a link hint, a preconnect or WebRTC); its sandbox refused"}
				if own(target) {
					r.Why = "the browser's own service tried to connect; its sandbox refused"
					t.mu.Lock()
					t.background = append(t.background, r)
					t.mu.Unlock()
				} else {
					t.note(r)
				}
			}
			_, _ = c.Write([]byte("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
		}()
	}
}

// close stops the sink and removes the profile (after the browser has
// ended).
func (sb *sandbox) close() {
	sb.once.Do(func() {
		sb.sink.Close()
		sb.wg.Wait()
		os.RemoveAll(sb.dir)
	})
}

// ownHosts are the domains of the browser's own services (update checks,
// field trials, safe browsing): what is sent to them is the browser's
// doing, not the page's, and is kept apart from the page's refused
// requests (Tab.Background).
var ownHosts = []string{"googleapis.com", "google.com", "gvt1.com", "gstatic.com", "googleusercontent.com", "chromium.org"}

// own says whether a URL the sink was asked for is one of the browser's
// own services'.
func own(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	h := strings.ToLower(u.Hostname())
	for _, d := range ownHosts {
		if h == d || strings.HasSuffix(h, "."+d) {
			return true
		}
	}
	return false
}
