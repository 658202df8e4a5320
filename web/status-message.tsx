import { useEffect, useRef } from 'preact/hooks';

/**
 * The outcome of the page's last action, read out by screen readers
 * (role="status"). An action often disables or replaces the button that
 * started it, at once or when the page loads again, and a browser then drops
 * the keyboard focus to the start of the document. So a new message takes
 * the focus when it finds the focus lost: the keyboard user goes on from
 * where they were, with the outcome in front of them.
 */
export function StatusMessage({ text }: { text: string }) {
  const element = useRef<HTMLParagraphElement>(null);
  const unseen = useRef('');
  useEffect(() => {
    unseen.current = text;
  }, [text]);
  // After every render: the button may go only when the page's data comes back.
  useEffect(() => {
    const focused = document.activeElement;
    if (unseen.current === '' || (focused !== null && focused !== document.body)) return;
    unseen.current = '';
    element.current?.focus();
  });
  return (
    <p ref={element} role="status" class="message" tabIndex={-1}>
      {text}
    </p>
  );
}
