// Package markup generates JSON-LD for a business from plain facts (the
// TypeScript kit's pagecheck-markup.ts): GenerateMarkup builds an
// Organization, LocalBusiness or LocalBusiness subtype object that package
// schema validates without errors, or refuses the facts.
//
// The facts are trimmed of ASCII whitespace (list entries too, empty ones
// dropped) and checked in this order; the first failure is the error, and
// every error message starts with "facts.":
//
//  1. name is required and holds no placeholder text (text.FindPlaceholder;
//     every later field but type, latitude and longitude is checked for
//     placeholders too, before its own check);
//  2. type, when given, is Organization, LocalBusiness or a subtype in
//     schema.LocalBusinessTypes, in any letter case;
//  3. url is an absolute http(s) URL;
//  4. telephone holds at least 7 digits and only digits, spaces and + ( ) . -;
//  5. email looks like an email address;
//  6. street, city, region, postal_code and country (placeholders only);
//  7. each opening_hours entry follows schema.IsOpeningHours;
//  8. price_range is at most 100 code points;
//  9. each same_as entry is an absolute http(s) URL;
//  10. description (placeholders only);
//  11. logo is an absolute http(s) URL;
//  12. latitude and longitude come together, as decimal numbers from -90 to
//     90 and from -180 to 180;
//  13. without a type, an address makes a LocalBusiness, else an
//     Organization; a LocalBusiness type needs an address, and opening
//     hours, a price range or coordinates need a LocalBusiness.
package markup
