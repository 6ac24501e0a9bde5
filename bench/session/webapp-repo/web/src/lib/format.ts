import i18n from "i18next";

// Display formatting for the web app. Everything goes through Intl with the
// user's locale and time zone; the API always sends UTC ISO strings.

let userTimeZone: string | undefined;

export function setFormatTimeZone(timeZone: string | undefined): void {
  userTimeZone = timeZone;
}

const locale = () => i18n.language || "en";

export function formatDate(iso: string, options: Intl.DateTimeFormatOptions = { dateStyle: "medium" }): string {
  return new Intl.DateTimeFormat(locale(), { timeZone: userTimeZone, ...options }).format(Date.parse(iso));
}

export function formatDateTime(iso: string): string {
  return formatDate(iso, { dateStyle: "medium", timeStyle: "short" });
}

const divisions: Array<[Intl.RelativeTimeFormatUnit, number]> = [
  ["second", 60],
  ["minute", 60],
  ["hour", 24],
  ["day", 7],
  ["week", 4.34524],
  ["month", 12],
  ["year", Number.POSITIVE_INFINITY],
];

/** "in 3 days", "5 minutes ago"; `now` is injectable for tests. */
export function formatRelative(iso: string, now: number = Date.now()): string {
  const rtf = new Intl.RelativeTimeFormat(locale(), { numeric: "auto" });
  let amount = (Date.parse(iso) - now) / 1000;
  for (const [unit, size] of divisions) {
    if (Math.abs(amount) < size) return rtf.format(Math.round(amount), unit);
    amount /= size;
  }
  return rtf.format(Math.round(amount), "year");
}

export function formatNumber(value: number, options?: Intl.NumberFormatOptions): string {
  return new Intl.NumberFormat(locale(), options).format(value);
}

export function formatMoney(cents: number, currency: string): string {
  return formatNumber(cents / 100, { style: "currency", currency });
}
