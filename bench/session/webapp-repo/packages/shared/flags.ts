// Every flag the web app or the API reads. A flag that has been at 100% for two
// weeks is removed together with its dead branch.

export interface FlagDefinition {
  owner: string;
  description: string;
  /** ISO date by which the flag and its dead branch are gone. */
  removeBy: string;
}

export const flags = {
  "new-board-view": {
    owner: "marta",
    description: "Column virtualisation and the compact card layout on the board",
    removeBy: "2026-12-15",
  },
  "command-palette": {
    owner: "jonas",
    description: "Cmd+K palette for jumping between projects and tasks",
    removeBy: "2027-01-10",
  },
  "billing-annual-plans": {
    owner: "priya",
    description: "Annual prices in checkout and on the plan page",
    removeBy: "2026-12-31",
  },
} as const satisfies Record<string, FlagDefinition>;

export type FlagName = keyof typeof flags;
