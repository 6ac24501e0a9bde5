// Product analytics events, named object_action. Properties carry ids and enums
// only: no names, emails or task titles.

export interface EventProps {
  task_created: { source: "quick_add" | "board" | "details" };
  task_completed: { source: "board" | "details" };
  task_moved: { fromStatus: string; toStatus: string };
  project_created: { template: string | null };
  teammate_invited: { role: "admin" | "member" | "guest" };
  board_filter_applied: { filter: "assignee" | "label" | "due" };
  search_performed: { resultCount: number };
  checkout_started: { plan: string };
}

export type EventName = keyof EventProps;
