/**
 * A labelled choice among named things (workloads, profiles), as the run and experiment forms
 * lay one out. The select keeps its own aria-label, the name tests and screen readers find it by.
 */
export function NameSelectField(props: {
  label: string;
  ariaLabel: string;
  value: string;
  items: readonly { name: string }[];
  onChange: (name: string) => void;
}) {
  return (
    <label>
      {props.label}{' '}
      <select aria-label={props.ariaLabel} value={props.value} onChange={(event) => props.onChange(event.target.value)}>
        {props.items.map((item) => (
          <option key={item.name}>{item.name}</option>
        ))}
      </select>
    </label>
  );
}
