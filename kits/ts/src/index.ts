// @boxd/sitecheck: boxd's site checks and review-reply guard, computed
// locally with results identical to the box's (pipelines/sitecheck).
export * from "./robots.js";
export * from "./pagecheck.js";
export * from "./replyguard.js";

import { robotsAccess } from "./robots.js";
import { pagecheckKitFunctions } from "./pagecheck.js";
import { replyguardKitFunctions } from "./replyguard.js";

/**
 * Every kit function by name: checkPageJsonLd, validateSchemaLocally,
 * robotsAccess, llmsTxtCheck, checkLiveMeta, hasMeaningfulAltText,
 * checkReply, isHealthcareBusiness, generateSchemaMarkup. Each takes the
 * decoded JSON input object and returns a plain value; bad input throws an
 * Error whose message says what to fix.
 */
export const kitFunctions: Record<string, (input: unknown) => unknown> = {
  robotsAccess: (input: unknown) => robotsAccess(input),
  ...pagecheckKitFunctions,
  ...replyguardKitFunctions,
};
