-- Every row trigger comes from the core's trigger catalog (core/src/triggers/): each is
-- declared once, with the columns it reads and its handler, and rendered here for each
-- database. The triggers the migrations before this one made are replaced by the catalog's;
-- the triggers of later releases change by changing their declaration and adding this line.
@triggers
