import { useTranslation } from "react-i18next";
import { cva } from "class-variance-authority";
import { CalendarDays } from "lucide-react";
import type { TaskSummary } from "@tandem/shared/schemas/task";
import { formatDate } from "../lib/format";
import { cn } from "../lib/cn";
import { Avatar } from "./Avatar";

const statusBadge = cva("inline-flex items-center rounded-full px-2 py-0.5 text-xs font-medium", {
  variants: {
    status: {
      todo: "bg-surface-raised text-muted",
      in_progress: "bg-warning-soft text-warning",
      done: "bg-success-soft text-success",
    },
  },
});

interface TaskCardProps {
  task: TaskSummary;
  onOpen: (taskId: string) => void;
  compact?: boolean;
}

export function TaskCard({ task, onOpen, compact = false }: TaskCardProps) {
  const { t } = useTranslation("tasks");
  const overdue = task.dueAt !== null && task.status !== "done" && Date.parse(task.dueAt) < Date.now();

  return (
    <article
      data-testid="task-card"
      className="group rounded-card border border-subtle bg-surface shadow-card transition-shadow hover:shadow-popover"
    >
      <button
        type="button"
        onClick={() => onOpen(task.id)}
        className={cn(
          "flex w-full flex-col gap-2 rounded-card text-left focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-accent",
          compact ? "p-2" : "p-3",
        )}
      >
        <span className={cn("text-sm font-medium text-fg", task.status === "done" && "text-muted line-through")}>
          {task.title}
        </span>

        <span className="flex items-center justify-between gap-2">
          <span className="flex items-center gap-2">
            <span className={statusBadge({ status: task.status })}>{t(`status.${task.status}`)}</span>
            {task.dueAt && (
              <span className={cn("inline-flex items-center gap-1 text-xs", overdue ? "text-danger" : "text-muted")}>
                <CalendarDays aria-hidden className="h-3.5 w-3.5" />
                <time dateTime={task.dueAt}>{formatDate(task.dueAt, { month: "short", day: "numeric" })}</time>
                {overdue && <span className="sr-only">{t("card.overdue")}</span>}
              </span>
            )}
          </span>
          {task.assignee && <Avatar user={task.assignee} size="sm" />}
        </span>
      </button>
    </article>
  );
}
