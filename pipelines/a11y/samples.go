package a11y

// The samples (contract 2, section 4), written for this project. Their
// planted problems are listed so the tests can hold the audit to them.

// Sample ids.
const (
	SampleShopWithIssues = "shop-with-issues"
	SampleCleanShop      = "clean-shop"
	SampleProductPage    = "product-page"
)

// SampleIDs lists the samples.
var SampleIDs = []string{SampleShopWithIssues, SampleCleanShop, SampleProductPage}

// A 2 × 2 grey PNG, inlined: the samples load with no network.
const pixel = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGNsaGhgYGBgYmBgYGBgAAAJ+AEFq0CjSwAAAABJRU5ErkJggg=="

// samples are the sample pages.
var samples = map[string]string{
	// Planted: no page language; the product image without alt; the
	// cart button with no name; "Add to cart" a div with a click handler
	// (the keyboard cannot reach it); grey on grey sale text; the
	// checkout link's focus removed; the coupon field without a label; the
	// newsletter form that sends empty.
	SampleShopWithIssues: `<!doctype html><html><head><meta charset="utf-8"><title>Trail Shoes – Shop</title>
<style>body{font:16px/1.5 sans-serif;margin:24px} .sale{color:#b0b0b0;background:#c8c8c8} #checkout:focus{outline:none} .buy{display:inline-block;padding:8px 16px;background:#1a5fd0;color:#fff;cursor:pointer}</style></head>
<body><header><a href="#main">Skip to content</a> <button class="cart-icon"><svg width="16" height="16" aria-hidden="true"><rect width="16" height="16"/></svg></button></header>
<main id="main"><h1>Trail running shoe</h1>
<img src="` + pixel + `" width="240" height="160">
<p class="sale">Sale ends tonight</p><p>$89.00</p>
<div class="buy" onclick="addToCart()">Add to cart</div>
<a id="checkout" href="/checkout">Checkout</a>
<form id="coupon" onsubmit="event.preventDefault()"><input name="coupon" placeholder="Coupon code"><button>Apply</button></form>
<form id="newsletter" action="/subscribe" method="get"><label for="nl">Email</label> <input id="nl" name="email"><button>Subscribe</button></form>
</main><script>function addToCart(){}</script></body></html>`,

	// Clean: the same shop, each problem fixed.
	SampleCleanShop: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Trail Shoes – Shop</title>
<style>body{font:16px/1.5 sans-serif;margin:24px} .buy{padding:8px 16px;background:#1a5fd0;color:#fff;border:0}</style></head>
<body><header><a href="#main">Skip to content</a> <button class="cart-icon" aria-label="Cart"><svg width="16" height="16" aria-hidden="true"><rect width="16" height="16"/></svg></button></header>
<main id="main"><h1>Trail running shoe</h1>
<img src="` + pixel + `" width="240" height="160" alt="Grey trail running shoe, side view">
<p>Sale ends tonight</p><p>$89.00</p>
<button class="buy" type="button">Add to cart</button>
<a id="checkout" href="/checkout">Checkout</a>
<form id="newsletter" novalidate onsubmit="event.preventDefault(); const e = document.getElementById('nl');
  e.setAttribute('aria-invalid', 'true'); document.getElementById('nl-err').textContent = 'Enter an email address, like name@example.com';">
<label for="nl">Email (required)</label> <input id="nl" name="email" required aria-describedby="nl-err">
<p id="nl-err" role="alert"></p><button>Subscribe</button></form>
</main></body></html>`,

	// Planted: a size selector that is a list of divs (unreachable), an
	// icon-only wishlist link, a quantity field without a label, and a
	// keyboard trap in the gift-message field.
	SampleProductPage: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Wool socks – Shop</title>
<style>body{font:16px/1.5 sans-serif;margin:24px} .size{display:inline-block;border:1px solid #333;padding:4px 10px;margin:2px;cursor:pointer}</style></head>
<body><main><h1>Wool socks</h1><img src="` + pixel + `" width="200" height="120" alt="Three pairs of wool socks">
<p>Size:</p><div class="size" onclick="pick(this)">S</div><div class="size" onclick="pick(this)">M</div><div class="size" onclick="pick(this)">L</div>
<p><a href="/wishlist"><svg width="16" height="16" aria-hidden="true"><circle cx="8" cy="8" r="8"/></svg></a></p>
<form id="cart" onsubmit="event.preventDefault()"><input name="qty" type="number" value="1">
<label for="gift">Gift message</label> <input id="gift" name="gift" onkeydown="if (event.key === 'Tab') { event.preventDefault(); this.focus(); }">
<button>Add to cart</button></form>
</main><script>function pick(e){}</script></body></html>`,
}

// Sample returns a sample page's HTML ("" for an unknown id).
func Sample(id string) string { return samples[id] }
