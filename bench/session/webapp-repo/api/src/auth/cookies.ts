import { createHmac, timingSafeEqual } from "node:crypto";
import { config } from "../config";

export const SESSION_COOKIE = "sid";

export const sessionCookieOptions = {
  httpOnly: true,
  secure: config.NODE_ENV !== "development",
  sameSite: "lax" as const,
  path: "/",
  signed: true,
  maxAge: 30 * 24 * 60 * 60,
};

function hmac(value: string, purpose: string): string {
  return createHmac("sha256", config.SESSION_SECRET).update(`${purpose}:${value}`).digest("base64url");
}

export function signCookie(sessionId: string): string {
  return `${sessionId}.${hmac(sessionId, "cookie")}`;
}

/** The CSRF token is bound to the session, so it needs no storage of its own. */
export function csrfFor(sessionId: string): string {
  return hmac(sessionId, "csrf");
}

export function verifyCsrf(sessionId: string, token: string | undefined): boolean {
  if (!token) return false;
  const expected = Buffer.from(csrfFor(sessionId));
  const given = Buffer.from(token);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
